"""Run options: arm names, budgets, presets, and building the arms from them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nmafc.core.retrieval import preset as retrieval_preset
from nmafc.embedding.base import Embedder
from nmafc.embedding.tokens import default_counter
from nmafc.errors import InvalidInput
from nmafc.evaluation.arms import ARM_NAMES, Arm, Bm25Arm, NmafcArm, RagArm
from nmafc.evaluation.session_arm import SessionsArm
from nmafc.settings import load_settings

MAIN_BUDGET = 1000  # the headline budget when a run covers several


@dataclass(frozen=True, slots=True)
class ArmOptions:
    """Baseline knobs (not CLI flags; recorded in summary.json)."""

    rag_window: int = 4
    rag_stride: int = 2
    bm25_k1: float = 1.2
    bm25_b: float = 0.75


def split_list(value: str | Sequence[str] | None) -> list[str]:
    """``"a,b"`` or ``["a", "b"]`` → ``["a", "b"]`` (blanks dropped)."""
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    return [item.strip() for item in items if item.strip()]


def parse_budgets(value: int | str | Sequence[int]) -> list[int]:
    """``1000``, ``"500,1000"`` or ``[500, 1000]`` → distinct positive budgets in order."""
    if isinstance(value, int):
        raw = [str(value)]
    elif isinstance(value, str):
        raw = split_list(value)
    else:
        raw = [str(v) for v in value]
    try:
        budgets = [int(b) for b in raw]
    except ValueError:
        budgets = []
    if not budgets or any(b < 1 for b in budgets):
        raise InvalidInput(
            f"Budget {value!r} is not a list of positive integers.", fix="Use e.g. 500,1000,2000."
        )
    return list(dict.fromkeys(budgets))


def main_budget(budgets: Sequence[int]) -> int:
    """1000 if it was run, else the first budget."""
    return MAIN_BUDGET if MAIN_BUDGET in budgets else budgets[0]


def parse_arms(value: str | Sequence[str]) -> list[str]:
    """Arm names in the order given, checked against the known ones."""
    names = list(dict.fromkeys(split_list(value)))
    unknown = [n for n in names if n not in ARM_NAMES]
    if unknown or not names:
        raise InvalidInput(
            f"Unknown arm(s) {unknown or value!r}.", fix=f"Choose from {','.join(ARM_NAMES)}."
        )
    return names


def resolve_preset(name: str | None) -> str:
    """The named preset (validated), or the configured default."""
    resolved = name or load_settings().retrieval.preset
    retrieval_preset(resolved)  # raises InvalidInput listing the valid names
    return resolved


def build_arms(
    names: Sequence[str],
    embedder: Embedder,
    preset: str,
    options: ArmOptions,
    *,
    engine_per_conversation: bool,
) -> list[Arm]:
    """The arms in ``names`` order, sharing one embedder and one token counter."""
    counter = default_counter()
    built: list[Arm] = []
    for name in names:
        if name == "nmafc":
            built.append(
                NmafcArm(
                    embedder,
                    preset_name=preset,
                    engine_per_conversation=engine_per_conversation,
                )
            )
        elif name == "rag":
            built.append(
                RagArm(embedder, counter, window=options.rag_window, stride=options.rag_stride)
            )
        elif name == "sessions":
            built.append(SessionsArm(embedder, counter))
        else:
            built.append(Bm25Arm(counter, k1=options.bm25_k1, b=options.bm25_b))
    return built

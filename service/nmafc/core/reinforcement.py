"""Reinforcement on use: which recalled facts a recall strengthens, and how often it counts.

Long-term potentiation rewards a fact for being *used*, not for being nearby. Two rules:

**Relevance.** A recall uses a fact if it rendered the fact into the context (as a line or
through its source turn) and the fact's cosine with the question is at least
``max(min_cosine, relative_to_best × best)``, where ``best`` is the highest cosine among
the recall's fact hits; of the facts that pass, only the first ``max_used`` in the
recall's rank order count. The absolute floor keeps a scope in which nothing is about the
question from strengthening the best of a bad lot; the relative floor keeps only what is
about as close to the question as its best match; the cap reflects that a question is
answered by a few facts, and keeps a question that names a person from strengthening
everything about them (whose cosines the name alone lifts to within the floor). Cosine
is the one signal every fact candidate has, whichever list found it (vector, keyword,
graph), and it means the same in every scope, store and preset: fused scores are
rank-based (in a small scope chatter ranks second and scores near the best) and keyword
scores depend on the corpus and the database (FTS5's BM25 against PostgreSQL's
ts_rank_cd). The fused rank only orders the facts that passed.

**Spacing.** A used fact is strengthened (``weight0 = 1``, ``k += 1``, ``anchor_turn =
now``) unless it already was within the last ``min_spacing`` of the decay clock: with the
default turn clock and spacing 1, ``k`` grows at most once per scope turn, however many
questions are asked meanwhile. Promotion to CoreAnchor (``k ≥ promote_k``) therefore counts
the distinct turns at which a fact was used. A fact never reinforced (``k = 0``) counts once
at the turn it was learnt: ``anchor_turn`` is then when it was learnt, not a reinforcement.

The constants are settings (``NMAFC_REINFORCEMENT_*``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from nmafc.core.decay import DecayParams
from nmafc.core.lifecycle import reinforce
from nmafc.core.records import MemoryRecord


@dataclass(frozen=True, slots=True)
class UseRule:
    """When a recalled fact counts as used, and how often its use is counted."""

    min_cosine: float = 0.3
    relative_to_best: float = 0.8
    max_used: int = 3
    min_spacing: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.relative_to_best <= 1.0:
            raise ValueError("relative_to_best must be in [0, 1]")
        if self.max_used < 1:
            raise ValueError("max_used must be ≥ 1")
        if self.min_spacing < 0:
            raise ValueError("min_spacing must be ≥ 0")


def used(rendered: Iterable[str], cosine: Mapping[str, float], rule: UseRule) -> list[str]:
    """The rendered facts relevant to the question: at most ``max_used``, each once.

    ``rendered`` is in the recall's rank order; ``cosine`` holds the question's cosine
    with every fact hit of the recall (the best of them sets the relative floor). A
    rendered fact without a cosine is not counted as used.
    """
    if not cosine:
        return []
    floor = max(rule.min_cosine, rule.relative_to_best * max(cosine.values()))
    relevant = [rid for rid in dict.fromkeys(rendered) if cosine.get(rid, -1.0) >= floor]
    return relevant[: rule.max_used]


def due(record: MemoryRecord, now: float, rule: UseRule) -> bool:
    """True unless the record was already reinforced within ``min_spacing`` of ``now``."""
    return record.k == 0 or now - record.anchor_turn >= rule.min_spacing


def strengthen(
    record: MemoryRecord, now: float, params: DecayParams, rule: UseRule
) -> MemoryRecord | None:
    """The used record, reinforced; None when the spacing rule says it already was."""
    return reinforce(record, now, params) if due(record, now, rule) else None

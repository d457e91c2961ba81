"""Reciprocal Rank Fusion: combine ranked lists without comparing their raw scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(slots=True)
class Fused:
    """One fused candidate: its RRF score and the rank it had in each list."""

    key: str
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)


def rrf(
    lists: Mapping[str, Sequence[str]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """``score(d) = Σ_lists w_list / (k + rank_list(d))``, ranks starting at 1, best first.

    Ties keep the order of first appearance, so results are deterministic.
    """
    fused: dict[str, Fused] = {}
    for name, keys in lists.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, key in enumerate(keys, start=1):
            entry = fused.get(key)
            if entry is None:
                entry = fused[key] = Fused(key)
            if name not in entry.ranks:
                entry.ranks[name] = rank
                entry.score += weight / (k + rank)
    return sorted(fused.values(), key=lambda f: -f.score)

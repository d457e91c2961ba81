"""Reciprocal Rank Fusion: combine ranked lists without comparing their raw scores."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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


def mmr(
    scores: Sequence[float],
    similarity: Callable[[int, int], float | None],
    diversity: float,
    limit: int,
) -> list[int]:
    """Maximal Marginal Relevance: re-order items (best first) to cover more ground.

    Each step takes the item maximising ``(1 − d)·relevance − d·max similarity to the items
    already taken``, relevance being the item's score scaled to [0, 1]. ``similarity`` may
    return None for pairs it cannot compare (they do not penalise each other).
    """
    if not scores or diversity <= 0:
        return list(range(min(limit, len(scores))))
    top, bottom = max(scores), min(scores)
    span = (top - bottom) or 1.0
    relevance = [(s - bottom) / span for s in scores]
    remaining = list(range(len(scores)))
    chosen: list[int] = []
    closest = [0.0] * len(scores)
    while remaining and len(chosen) < limit:
        best = max(remaining, key=lambda i: (1 - diversity) * relevance[i] - diversity * closest[i])
        chosen.append(best)
        remaining.remove(best)
        for i in remaining:
            sim = similarity(best, i)
            if sim is not None and sim > closest[i]:
                closest[i] = sim
    return chosen

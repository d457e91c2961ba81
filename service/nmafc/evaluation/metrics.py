"""Scoring as pure functions: answer reachability, evidence recall, ranks, McNemar, percentiles."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from nmafc.core.text import STOPWORDS

_PUNCTUATION = re.compile(r"[^\w\s]|_")
_ARTICLES = frozenset({"a", "an", "the"})


def normalise(text: object) -> list[str]:
    """``str(text)`` lower-cased, punctuation replaced by spaces, articles dropped, as words."""
    # Punctuation becomes a space (not nothing) so 'C.S. Lewis' and 'C. S. Lewis' agree.
    cleaned = _PUNCTUATION.sub(" ", str(text).lower())
    return [w for w in cleaned.split() if w not in _ARTICLES]


def answer_tokens(answer: object) -> list[str]:
    """The answer's normalised words that are not stopwords, in order, distinct."""
    return list(dict.fromkeys(w for w in normalise(answer) if w not in STOPWORDS))


def answer_reachable(answer: object, context: str) -> bool | None:
    """Every answer token occurs as a whole word in the normalised context; None if no tokens."""
    tokens = answer_tokens(answer)
    if not tokens:
        return None  # e.g. 'No': nothing a word match could confirm
    present = set(normalise(context))
    return all(token in present for token in tokens)


def evidence_recall(evidence: Sequence[str], retrieved: Iterable[str]) -> float | None:
    """Share of evidence turns present in ``retrieved``; None when there is no evidence."""
    gold = set(evidence)
    if not gold:
        return None
    return len(gold & set(retrieved)) / len(gold)


def full_evidence_hit(evidence: Sequence[str], retrieved: Iterable[str]) -> bool | None:
    """All evidence turns retrieved; None when there is no evidence."""
    gold = set(evidence)
    if not gold:
        return None
    return gold <= set(retrieved)


def dedupe(items: Iterable[str]) -> list[str]:
    """Items in first-seen order without repeats."""
    return list(dict.fromkeys(items))


def recall_any_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> bool | None:
    """Any gold item among the first ``k`` ranked; None when there is no gold item."""
    wanted = set(gold)
    if not wanted:
        return None
    return bool(wanted & set(ranked[:k]))


def recall_all_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> bool | None:
    """Every gold item among the first ``k`` ranked; None when there is no gold item."""
    wanted = set(gold)
    if not wanted:
        return None
    return wanted <= set(ranked[:k])


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float | None:
    """Share of gold items found among the first ``k`` ranked; None when there is no gold item."""
    wanted = set(gold)
    if not wanted:
        return None
    return len(wanted & set(ranked[:k])) / len(wanted)


def mean(values: Iterable[float | bool | None]) -> float | None:
    """Mean of the non-None values (bools count as 0/1); None when there are none."""
    kept = [float(v) for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0–100) with linear interpolation (numpy's default method)."""
    if not values:
        return None
    ordered = sorted(float(v) for v in values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return float(ordered[low])
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p: min(1, 2·P(X ≤ min(b, c))), X ~ Bin(b + c, ½)."""
    n = b + c
    if n == 0:
        return 1.0
    # Exact integer arithmetic; int / int stays correctly rounded even for large n.
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / (1 << n)
    return min(1.0, 2.0 * tail)


def discordant(first: Sequence[bool | None], second: Sequence[bool | None]) -> tuple[int, int]:
    """(b, c): pairs where only the first arm hit, and where only the second did; Nones skipped."""
    b = c = 0
    for x, y in zip(first, second, strict=True):
        if x is None or y is None:
            continue
        b += bool(x and not y)
        c += bool(y and not x)
    return b, c

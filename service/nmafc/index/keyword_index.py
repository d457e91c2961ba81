"""BM25 postings over a working set's fact texts, ranked as the Cold ROM's FTS5 ranks them.

Recall looks every query up by keyword. Asking the Cold ROM costs a SQL round trip that
scores every posting of the query's terms, ≈ 16 ms of CPU per recall at 10⁵ facts in a
scope; the working set is in RAM already, so its texts are indexed beside its vectors and
scored with NumPy over the postings instead. The score is FTS5's ``bm25()`` with the
columns weighted as the Cold search weighs them (entity 0.5, content 1.0), over this
scope's documents rather than the whole table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from nmafc.core.keyword import K1, B, index_terms
from nmafc.index.top_k import kth_highest

ENTITY_WEIGHT = 0.5
CONTENT_WEIGHT = 1.0
_WEIGHTS: dict[float, float] = {}
Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]


class KeywordIndex:
    """Postings keyed by the caller's row numbers; one document per row."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[int, float]] = {}
        # Each term's postings as arrays, built at its first lookup and dropped when it
        # changes: turning a common term's dict into arrays cost more than scoring it.
        self._arrays: dict[str, _Posting] = {}
        self._terms_of: dict[int, tuple[str, ...]] = {}
        self._length = np.zeros(4, dtype=np.float64)  # grown by doubling, as the matrix
        self._tie = np.zeros(4, dtype=np.int64)
        self.total_length = 0
        self.postings = 0  # (term, row) entries held, for memory accounting

    def __len__(self) -> int:
        return len(self._terms_of)

    def put(self, row: int, entity: str, content: str, tie: int) -> None:
        """Index (or re-index) the document at ``row``; ``tie`` orders it among equals."""
        self.remove(row)
        entity_terms, entity_length = index_terms(entity)
        content_terms, content_length = index_terms(content)
        weights: dict[str, float] = {}
        for term in entity_terms:
            weights[term] = weights.get(term, 0.0) + ENTITY_WEIGHT
        for term in content_terms:
            weights[term] = weights.get(term, 0.0) + CONTENT_WEIGHT
        for term, weight in weights.items():
            # One float object per distinct weight (sums of the two column weights) rather
            # than one per posting: 24 bytes of each (term, row) entry.
            self._postings.setdefault(term, {})[row] = _WEIGHTS.setdefault(weight, weight)
            self._arrays.pop(term, None)
        self._terms_of[row] = tuple(weights)
        self.postings += len(weights)
        if row >= len(self._length):
            size = max(row + 1, 2 * len(self._length))
            self._length = _grown(self._length, size)
            self._tie = _grown(self._tie, size)
        length = entity_length + content_length
        self._length[row] = length
        self._tie[row] = tie
        self.total_length += length

    def remove(self, row: int) -> None:
        terms = self._terms_of.pop(row, None)
        if terms is None:
            return
        self.postings -= len(terms)
        for term in terms:
            posting = self._postings[term]
            del posting[row]
            self._arrays.pop(term, None)
            if not posting:
                del self._postings[term]
        self.total_length -= int(self._length[row])
        self._length[row] = 0

    def frequency(self, term: str) -> int:
        """Documents containing ``term``."""
        return len(self._postings.get(term, ()))

    def top(
        self, idf: Mapping[str, float], average_length: float, limit: int
    ) -> tuple[Rows, Scores]:
        """The ``limit`` best rows for the terms in ``idf`` and their BM25 scores.

        Best first; equal scores go by the rows' ``tie`` keys. Only the terms' postings are
        touched: a row's score is the sum over its terms, summed in the order of ``idf``.
        """
        parts = [
            (weight, scored)
            for term, weight in idf.items()
            if (scored := self._scored(term, average_length or 1.0)) is not None
        ]
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        hit = np.concatenate([rows for _, (rows, _) in parts])
        scores = np.concatenate([weight * saturated for weight, (_, saturated) in parts])
        if len(parts) > 1:
            # A stable sort keeps each row's terms in order (a merge of sorted runs).
            order = np.argsort(hit, kind="stable")
            hit, scores = hit[order], scores[order]
            starts = np.flatnonzero(np.concatenate(([True], hit[1:] != hit[:-1])))
            hit, scores = hit[starts], np.add.reduceat(scores, starts)
        if len(hit) > limit:
            hit, scores = self._cut(hit, scores, limit)
        order = np.lexsort((self._tie[hit], -scores))[:limit]
        return hit[order], scores[order]

    def _cut(self, hit: Rows, scores: Scores, limit: int) -> tuple[Rows, Scores]:
        """The ``limit`` rows that rank first: all above the limit-th score, then its ties.

        Short texts tie often (every document with the same terms and length scores the
        same), and sorting thousands of tied rows cost more than scoring them; only the
        ties needed are picked, by tie key, then by row as the sort would.
        """
        kth = kth_highest(scores, limit)
        above = scores > kth
        tied = np.flatnonzero(scores == kth)  # ascending, as ``hit`` is
        need = limit - int(np.count_nonzero(above))
        if len(tied) > need:
            keys = self._tie[hit[tied]]
            last = np.partition(keys, need - 1)[need - 1]
            below = tied[keys < last]
            tied = np.concatenate([below, tied[keys == last][: need - len(below)]])
        keep = np.flatnonzero(above)
        keep = np.sort(np.concatenate([keep, tied]))
        return hit[keep], scores[keep]

    def _scored(self, term: str, average_length: float) -> tuple[Rows, Scores] | None:
        """``term``'s rows (ascending) and their BM25 term-frequency part at this length.

        Built at the term's first lookup and kept until it changes, with the part for the
        last average length asked; readers may race to build either, and both agree.
        """
        arrays = self._arrays.get(term)
        if arrays is None:
            posting = self._postings.get(term)
            if not posting:
                return None
            rows = np.fromiter(posting.keys(), dtype=np.int64, count=len(posting))
            freq = np.fromiter(posting.values(), dtype=np.float64, count=len(posting))
            order = np.argsort(rows)
            arrays = self._arrays[term] = _Posting(rows[order], freq[order])
        saturated = arrays.saturated
        if saturated is None or saturated[0] != average_length:
            rows, freq = arrays.rows, arrays.freq
            norm = K1 * (1 - B + B * self._length[rows] / average_length)
            saturated = (average_length, freq * (K1 + 1) / (freq + norm))
            arrays.saturated = saturated
        return arrays.rows, saturated[1]


@dataclass(slots=True)
class _Posting:
    rows: Rows
    freq: Scores
    saturated: tuple[float, Scores] | None = None  # (average length, tf part) last asked


def _grown(array: npt.NDArray[Any], size: int) -> npt.NDArray[Any]:
    grown = np.zeros(size, dtype=array.dtype)
    grown[: len(array)] = array
    return grown

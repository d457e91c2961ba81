"""The exact top-k of a score vector, faster than a partition when k is small."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def best_rows(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` highest scores, best first; equal scores by index.

    Exact. A strided sample of about a thousand scores gives a threshold that about ``4k``
    scores reach; when at least ``k`` do, the best are among them and only those are
    sorted. That is a comparison pass instead of a partition of every score, which cost
    as much as the matrix product itself for a batch of queries. Otherwise, a partition.
    """
    n = len(scores)
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    if k >= n:
        return np.argsort(-scores, kind="stable")
    step = n // 1024
    if step >= 8 and 8 * k < n:
        sample = scores[::step]
        reach = min(len(sample), 4 * k // step + 1)
        threshold = np.partition(sample, len(sample) - reach)[len(sample) - reach]
        candidates = np.flatnonzero(scores >= threshold)
        if len(candidates) >= k:
            return candidates[np.argsort(-scores[candidates], kind="stable")[:k]]
    top = np.flatnonzero(scores >= np.partition(scores, n - k)[n - k])
    return top[np.argsort(-scores[top], kind="stable")[:k]]


def kth_highest(scores: npt.NDArray[np.floating], k: int, bins: int = 1024) -> float:
    """The ``k``-th highest of ``scores`` (``1 <= k <= len``, no NaN): exact, in linear time.

    A partition is the textbook way, but NumPy's slows down about tenfold on arrays where
    many values are equal, which is what BM25 scores of short texts are (every document
    with the same terms and length scores the same). Instead, the values are counted into
    ``bins`` equal-width bins, the bin holding the ``k``-th is kept, and the count repeats
    within it until its values are all equal. Each round keeps one bin of a range that
    spans at least two, so the values shrink every round.
    """
    values = np.asarray(scores)
    if not 1 <= k <= len(values):
        raise ValueError(f"k must be in [1, {len(values)}], got {k}")
    while True:
        low, high = values.min(), values.max()
        if low == high or k == len(values):
            return float(low)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            scale = (bins - 1) / (high - low)
        if not np.isfinite(scale) or scale == 0:  # infinities, or a span past float range
            return float(np.partition(values, len(values) - k)[len(values) - k])
        # Monotone in the value (correctly rounded ops), so equal values share a bin.
        bin_of = np.minimum(((values - low) * scale).astype(np.intp), bins - 1)
        above = np.cumsum(np.bincount(bin_of, minlength=bins)[::-1])  # count in bins >= b
        from_top = int(np.searchsorted(above, k))  # first bin from the top reaching k
        chosen = bins - 1 - from_top
        k -= int(above[from_top - 1]) if from_top else 0
        values = values[bin_of == chosen]

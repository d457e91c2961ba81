"""The k-th highest score, found exactly without a partition."""

from __future__ import annotations

import numpy as np
import pytest

from nmafc.index.top_k import kth_highest


def _expected(scores: np.ndarray, k: int) -> float:
    return float(np.sort(scores)[::-1][k - 1])


@pytest.mark.parametrize("seed", range(40))
def test_kth_highest_is_exact_on_spread_tied_and_extreme_scores(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5_000))
    spread = rng.standard_normal(n)
    few_values = rng.integers(0, 4, n).astype(np.float64)  # BM25 of short texts: many ties
    tiny = spread * 1e-300  # a span near the smallest floats
    extreme = np.concatenate([spread, [1e308, -1e308]])  # a span past the float range
    subnormal = rng.integers(0, 3, n) * 5e-324  # a span too small to divide by
    for scores in (spread, few_values, tiny, extreme, subnormal):
        for k in {1, len(scores), int(rng.integers(1, len(scores) + 1))}:
            assert kth_highest(scores, k) == _expected(scores, k)


def test_kth_highest_of_all_equal_scores_is_that_score() -> None:
    assert kth_highest(np.full(10_000, 2.5), 30) == 2.5


def test_kth_highest_handles_infinities() -> None:
    scores = np.array([1.0, np.inf, -np.inf, 3.0, 2.0])

    assert [kth_highest(scores, k) for k in range(1, 6)] == [np.inf, 3.0, 2.0, 1.0, -np.inf]


@pytest.mark.parametrize("k", [0, 4])
def test_kth_highest_refuses_a_k_outside_the_scores(k: int) -> None:
    with pytest.raises(ValueError, match="k must be"):
        kth_highest(np.array([1.0, 2.0, 3.0]), k)

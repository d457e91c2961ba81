"""The int8 scan: a coarse pass over a quarter of the bytes that returns the exact top-k.

Matrices are half precision, as a working set holds them; the reference is the float32
product over those same stored vectors.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nmafc.index.int8_blocks import QUERY_LEVELS
from nmafc.index.int8_scan import BLOCK_ROWS, Int8Scan, quantise
from nmafc.index.top_k import best_rows

DIM = 384
Matrix = npt.NDArray[np.float32]
Half = npt.NDArray[np.float16]


def _unit(rng: np.random.Generator, n: int, dim: int = DIM) -> Matrix:
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _stored(rng: np.random.Generator, n: int) -> Half:
    return _unit(rng, n).astype(np.float16)


def _float32_top(matrix: Half, alive: npt.NDArray[np.bool_], query: Matrix, k: int) -> list[int]:
    scores = matrix.astype(np.float32) @ query
    scores[~alive] = -np.inf
    top = best_rows(scores, k)
    return [int(row) for row in top if alive[row]]


def _scan(matrix: Half) -> Int8Scan:
    scan = Int8Scan(matrix.shape[1])
    scan.sync(matrix, len(matrix))
    return scan


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), spread=st.floats(1e-3, 1e3))
def test_the_rounding_bound_holds_for_any_pair(seed: int, spread: float) -> None:
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((64, 48)).astype(np.float32) * spread
    query = rng.standard_normal((1, 48)).astype(np.float32)
    codes, scale, error, norm = quantise(rows)
    q_codes, q_scale, q_error, _ = quantise(query, QUERY_LEVELS)

    coarse = (codes.astype(np.int64) @ q_codes[0].astype(np.int64)) * scale * q_scale[0]
    exact = rows @ query[0]
    bound = np.linalg.norm(query[0]) * error + q_error[0] * norm

    assert np.all(np.abs(coarse - exact) <= bound * (1 + 1e-5) + 1e-6)


def test_a_zero_vector_quantises_to_zero_without_dividing_by_zero() -> None:
    codes, scale, error, norm = quantise(np.zeros((1, 8), dtype=np.float32))

    assert codes.tolist() == [[0] * 8]
    assert error.tolist() == [0.0]
    assert norm.tolist() == [0.0]
    assert np.isfinite(scale).all()


@pytest.mark.parametrize("queries", [1, 7])
def test_results_equal_the_float32_scan_with_dead_and_rewritten_rows(queries: int) -> None:
    rng = np.random.default_rng(queries)
    n = BLOCK_ROWS + 3_000  # two packed blocks, the second partly filled
    matrix = _stored(rng, n)
    alive = np.ones(n, dtype=bool)
    scan = _scan(matrix)
    alive[rng.choice(n, 2_000, replace=False)] = False
    for row in rng.choice(n, 300, replace=False):
        matrix[row] = _unit(rng, 1)[0]  # rows of the full block too: it is rebuilt
        scan.mark(int(row))
    scan.sync(matrix, n)
    probes = _unit(rng, queries)

    found = scan.search(matrix, alive, probes, 30)

    for (rows, scores), query in zip(found, probes, strict=True):
        assert rows.tolist() == _float32_top(matrix, alive, query, 30)
        exact = matrix[rows].astype(np.float32) @ query
        assert scores.tolist() == pytest.approx(exact.tolist(), abs=1e-6)


def test_random_vectors_are_exact_over_full_and_filling_blocks() -> None:
    # Random vectors barely cluster, the hardest case for the certificate.
    rng = np.random.default_rng(21)
    matrix = _stored(rng, 3 * BLOCK_ROWS + 500)
    alive = np.ones(len(matrix), dtype=bool)
    scan = _scan(matrix)
    probes = _unit(rng, 16)

    found = scan.search(matrix, alive, probes, 30)

    for (rows, _), query in zip(found, probes, strict=True):
        assert rows.tolist() == _float32_top(matrix, alive, query, 30)


def test_rows_appended_after_a_sync_are_scanned_once_synced_again() -> None:
    rng = np.random.default_rng(5)
    matrix = _stored(rng, 12_000)
    scan = Int8Scan(DIM)
    scan.sync(matrix, 10_000)
    query = matrix[11_500].astype(np.float32) + 0.01 * _unit(rng, 1)[0]
    scan.sync(matrix, 12_000)

    ((rows, _),) = scan.search(matrix, np.ones(12_000, dtype=bool), query[None, :], 5)

    assert int(rows[0]) == 11_500
    assert rows.tolist() == _float32_top(matrix, np.ones(12_000, dtype=bool), query, 5)


def test_ties_at_the_cut_widen_the_rescoring_and_stay_exact() -> None:
    rng = np.random.default_rng(9)
    matrix = _stored(rng, 20_000)
    matrix[1_000:1_600] = matrix[1_000]  # 600 identical rows tie far beyond the 4k candidates
    alive = np.ones(len(matrix), dtype=bool)
    scan = _scan(matrix)

    query = matrix[1_000].astype(np.float32)
    ((rows, _),) = scan.search(matrix, alive, query[None, :], 10)

    assert scan.widened == 1
    assert rows.tolist() == list(range(1_000, 1_010))  # equal scores go by row


def test_clustered_vectors_are_certified_without_widening() -> None:
    rng = np.random.default_rng(11)
    centres = _unit(rng, 50)
    noisy = centres[rng.integers(0, 50, 30_000)] + 0.08 * rng.standard_normal((30_000, DIM))
    matrix = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float16)
    alive = np.ones(len(matrix), dtype=bool)
    scan = _scan(matrix)
    probes = _unit(rng, 16) * 0.3 + centres[:16]
    probes = (probes / np.linalg.norm(probes, axis=1, keepdims=True)).astype(np.float32)

    found = scan.search(matrix, alive, probes, 30)

    assert scan.widened == 0
    for (rows, _), query in zip(found, probes, strict=True):
        assert rows.tolist() == _float32_top(matrix, alive, query, 30)


def test_fewer_live_rows_than_asked_returns_them_all() -> None:
    rng = np.random.default_rng(2)
    matrix = _stored(rng, 9_000)
    alive = np.zeros(len(matrix), dtype=bool)
    alive[[5, 7, 4_000]] = True
    scan = _scan(matrix)

    ((rows, _),) = scan.search(matrix, alive, matrix[7][None, :].astype(np.float32), 10)

    assert sorted(rows.tolist()) == [5, 7, 4_000]
    assert int(rows[0]) == 7


def test_asking_for_no_rows_returns_empty_lists() -> None:
    rng = np.random.default_rng(4)
    matrix = _stored(rng, 9_000)
    scan = _scan(matrix)

    found = scan.search(matrix, np.ones(len(matrix), dtype=bool), _unit(rng, 2), 0)

    assert [rows.tolist() for rows, _ in found] == [[], []]


def test_a_full_block_keeps_no_codes_and_a_rewritten_row_rebuilds_it_from_the_vectors() -> None:
    rng = np.random.default_rng(17)
    matrix = _stored(rng, BLOCK_ROWS + 100)
    scan = _scan(matrix)
    target = _unit(rng, 1)[0]
    matrix[123] = target  # in the full block, which holds only its kernel's packed copy
    scan.mark(123)
    scan.sync(matrix, len(matrix))
    alive = np.ones(len(matrix), dtype=bool)

    ((rows, _),) = scan.search(matrix, alive, target[None, :], 5)

    assert int(rows[0]) == 123
    assert rows.tolist() == _float32_top(matrix, alive, target, 5)
    assert not hasattr(scan._blocks[0], "codes")  # noqa: SLF001 - what the block keeps
    assert scan._blocks[1].codes.shape == (100, DIM)  # noqa: SLF001

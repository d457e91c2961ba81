"""Vectors narrowed to half precision round exactly as NumPy rounds them."""

from __future__ import annotations

import numpy as np

from nmafc.index.half import HALF, narrowed, widened


def test_narrowing_rounds_as_numpy_does_edge_values_included() -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((257, 384)).astype(np.float32)  # an odd count: a SIMD tail
    rows[0, :8] = [0.0, -0.0, 1e-8, 6.1e-5, 65504.0, 70000.0, -np.inf, np.nan]
    with np.errstate(over="ignore"):
        want = rows.astype(HALF)
    got = narrowed(rows)
    assert got.dtype == HALF
    assert got.flags.c_contiguous
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_narrowing_takes_any_layout_and_widening_restores_the_half_values() -> None:
    rows = np.asfortranarray(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    assert np.array_equal(widened(narrowed(rows)), rows.astype(HALF).astype(np.float32))
    assert narrowed(np.zeros((0, 4), dtype=np.float32)).shape == (0, 4)

"""Both kernels give exact integer dot products times the row scale, at the code extremes."""

from __future__ import annotations

import numpy as np
import pytest

from nmafc.index.int8_blocks import QUERY_LEVELS, FillingBlock, GemmBlock


@pytest.mark.parametrize("kind", [GemmBlock, FillingBlock])
def test_scores_are_exact_even_where_every_product_is_largest(
    kind: type[GemmBlock] | type[FillingBlock],
) -> None:
    rng = np.random.default_rng(3)
    rows = rng.integers(-127, 128, size=(1000, 384), dtype=np.int8)
    rows[:4] = np.array([[127], [-127], [127], [-127]], dtype=np.int8)  # extreme rows
    queries = rng.integers(-QUERY_LEVELS, QUERY_LEVELS + 1, size=(6, 384), dtype=np.int8)
    queries[:2] = np.array([[QUERY_LEVELS], [-QUERY_LEVELS]], dtype=np.int8)

    scale = rng.uniform(1e-4, 1e-2, size=1000).astype(np.float32)

    scores = kind(rows, scale).scores(queries)

    dots = queries.astype(np.int64) @ rows.T.astype(np.int64)
    assert np.array_equal(np.rint(scores / scale).astype(np.int64), dots)
    assert np.allclose(scores, dots * scale.astype(np.float64), rtol=1e-6, atol=0)

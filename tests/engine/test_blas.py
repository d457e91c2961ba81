"""The BLAS thread cap: set by the engine from the settings, scores unchanged by it."""

from __future__ import annotations

import numpy as np
from threadpoolctl import ThreadpoolController

from nmafc.engine.blas import limit_blas_threads
from nmafc.engine.engine import MemoryEngine
from nmafc.settings import Settings


def blas_threads() -> list[int]:
    """The thread count of each BLAS library loaded in this process."""
    controllers = ThreadpoolController().select(user_api="blas").lib_controllers
    return [controller.num_threads for controller in controllers]


def test_opening_an_engine_caps_blas_at_the_configured_thread_count(
    settings: Settings, shared_embedder: object
) -> None:
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
        try:
            assert blas_threads() == [1] * len(blas_threads())
            assert blas_threads()
        finally:
            engine.close()


def test_zero_leaves_the_library_default_alone() -> None:
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        limit_blas_threads(0)
        assert set(blas_threads()) == {2}


def test_a_matrix_vector_scan_scores_the_same_on_one_thread_as_on_two() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.standard_normal((20_000, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        two = matrix @ query
    with ThreadpoolController().limit(limits=1, user_api="blas"):
        one = matrix @ query
    assert np.array_equal(one, two)

"""The BLAS thread cap: a server process's, never the library's; scores unchanged by it."""

from __future__ import annotations

import gc

import numpy as np
from threadpoolctl import ThreadpoolController

from nmafc.engine.engine import MemoryEngine
from nmafc.runtime import prepare_server_process
from nmafc.runtime.blas import limit_blas_threads
from nmafc.settings import Settings


def blas_threads() -> list[int]:
    """The thread count of each BLAS library loaded in this process."""
    controllers = ThreadpoolController().select(user_api="blas").lib_controllers
    return [controller.num_threads for controller in controllers]


def test_a_server_process_caps_blas_at_one_thread_unless_configured(settings: Settings) -> None:
    # The allocator's part is tested on its own (test_malloc): left out of this process.
    settings = settings.model_copy(
        update={
            "server": settings.server.model_copy(update={"malloc_arenas": 0, "malloc_trim_s": 0})
        }
    )
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        served = prepare_server_process(settings)
        assert blas_threads()
        assert blas_threads() == [1] * len(blas_threads())
        assert served.hot.blas_threads == 1
        assert served.hot.gc_freeze_every == 10_000
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        three = settings.model_copy(
            update={"hot": settings.hot.model_copy(update={"blas_threads": 3})}
        )
        assert prepare_server_process(three).hot.blas_threads == 3


def test_opening_an_engine_leaves_the_host_process_alone(
    settings: Settings, shared_embedder: object
) -> None:
    gc.unfreeze()
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
        try:
            assert set(blas_threads()) == {2}
            assert engine.settings.hot.gc_freeze_every is None
        finally:
            engine.close()
    assert gc.get_freeze_count() == 0


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

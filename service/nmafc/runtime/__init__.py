"""Process tuning that only a server process switches on: ``prepare_server_process``.

The library never re-tunes its host: a process that embeds ``Memory``/``SyncMemory``
keeps its allocator, BLAS threads and garbage collector as they were. ``nmafc serve`` (each
of its workers) and the benchmarks that stand in for it call this once, before any thread.
"""

from __future__ import annotations

from nmafc.settings import Settings

SERVER_BLAS_THREADS = 1
SERVER_GC_FREEZE_EVERY = 10_000


def prepare_server_process(settings: Settings) -> Settings:
    """Tune this process for serving; the settings with the server's defaults filled in.

    ``hot.blas_threads`` and ``hot.gc_freeze_every`` left unset mean "the host's own" in
    the library and the values here in a server.
    """
    from nmafc.runtime import blas, malloc

    malloc.tune(settings.server.malloc_arenas, settings.server.malloc_trim_s)
    hot = settings.hot
    hot = hot.model_copy(
        update={
            "blas_threads": SERVER_BLAS_THREADS if hot.blas_threads is None else hot.blas_threads,
            "gc_freeze_every": (
                SERVER_GC_FREEZE_EVERY if hot.gc_freeze_every is None else hot.gc_freeze_every
            ),
        }
    )
    blas.limit_blas_threads(hot.blas_threads or 0)
    return settings.model_copy(update={"hot": hot})

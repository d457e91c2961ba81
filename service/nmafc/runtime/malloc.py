"""glibc's allocator, tuned for a server that runs for weeks.

A long-running ``nmafc serve`` grows its RSS with every write even when the live heap
does not (tracemalloc flat, ONNX Runtime's arena at a plateau): glibc gives each thread
that allocates its own arena, up to 8 per core, and the freed space of arrays, Arrow
batches and tokenizer buffers stays fragmented across them. Capping the arenas and
handing free pages back periodically (``malloc_trim``) bounds that growth; the A/B is in
``benchmarks/results/soak_malloc_ab.md``. Only the serve runtime calls this, before it
starts threads; a process that embeds the library keeps its allocator as it was.
"""

from __future__ import annotations

import ctypes
import logging
import threading

log = logging.getLogger("nmafc.runtime")

_M_ARENA_MAX = -8  # glibc's mallopt parameter numbers (malloc.h)


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to tune
        return None
    return libc


def cap_arenas(arenas: int) -> bool:
    """Limit glibc to ``arenas`` malloc arenas; call before threads exist. False if not glibc."""
    libc = _glibc()
    if libc is None or arenas <= 0:
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas))


def trim() -> bool:
    """Return the free pages at the top of every arena to the kernel; True if any were."""
    libc = _glibc()
    return bool(libc.malloc_trim(0)) if libc is not None else False


def start_trimming(every_s: float) -> threading.Event | None:
    """Trim every ``every_s`` seconds on a daemon thread; set the returned event to stop."""
    if every_s <= 0 or _glibc() is None:
        return None
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            trim()

    threading.Thread(target=loop, name="nmafc-malloc-trim", daemon=True).start()
    return stop


def tune(arenas: int, trim_every_s: float) -> None:
    """The serve runtime's allocator settings (``NMAFC_SERVER_MALLOC_*``)."""
    capped = cap_arenas(arenas)
    trimming = start_trimming(trim_every_s) is not None
    log.debug("malloc: arenas capped at %s: %s; trimming every %s s: %s",
              arenas, capped, trim_every_s, trimming)  # fmt: skip

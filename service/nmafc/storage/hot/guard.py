"""A deadline and a circuit breaker around Hot store calls on a remote object store.

When S3 stops answering, LanceDB calls block inside its own retry loops for as long as the
outage lasts. The Hot store is a cache of the Cold ROM's log, so NMAFC need not wait: a
call that misses its deadline, or fails, opens the breaker for ``cooldown_s``; while it is
open Hot calls fail at once with :class:`StoreUnavailable`, writes stay acknowledged by
their Cold commit (Hot catches up from the log later) and reads are served from RAM or the
Cold ROM. After the cooldown the next call probes the store again.

A call that missed its deadline cannot be cancelled, and after an outage such calls may hang
for minutes on the dead server's connections, then still commit. Waiting for them would
keep Hot down long after S3 is back, so the guard does not: it hands the still-running call
to the caller in ``StoreUnavailable.running``, and the caller re-checks what the call touched
once it ends.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import ParamSpec, TypeVar

from nmafc.errors import StoreUnavailable

P = ParamSpec("P")
T = TypeVar("T")
log = logging.getLogger(__name__)


class HotGuard:
    def __init__(
        self,
        timeout_s: float,
        cooldown_s: float,
        reconnect: Callable[[], None] | None = None,
        workers: int = 16,
    ) -> None:
        self.timeout_s = timeout_s
        self.cooldown_s = cooldown_s
        # Calls stuck on the dead server can hold the old client's connections for good:
        # the first call after a trip runs on a fresh client.
        self._reconnect = reconnect
        self._stale = False
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nmafc-hot")
        self._open_until = 0.0
        self._lock = threading.Lock()
        self._inside = threading.local()

    @property
    def open(self) -> bool:
        return time.monotonic() < self._open_until

    def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` within the deadline, or :class:`StoreUnavailable`."""
        if getattr(self._inside, "active", False):  # a guarded call calling another
            return fn(*args, **kwargs)
        if self.open:
            raise self._unavailable("is not answering (retrying shortly)")
        call = functools.partial(fn, *args, **kwargs)
        future = self._pool.submit(self._run, call, self._stale and self._reconnect)
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            why = f"did not answer within {self.timeout_s:g}s"
            self._trip(why)
            raise StoreUnavailable(f"The Hot store (S3) {why}.", fix=_FIX, running=future) from None
        except (StoreUnavailable, OSError, RuntimeError) as exc:  # LanceDB's I/O failures
            self._trip(f"failed: {type(exc).__name__}")
            raise

    def _run(self, call: Callable[[], T], reconnect: Callable[[], None] | None | bool) -> T:
        self._inside.active = True
        try:
            if callable(reconnect):
                reconnect()
                self._stale = False
            return call()
        finally:
            self._inside.active = False

    def _trip(self, why: str) -> None:
        with self._lock:
            if not self.open:
                log.warning("Hot store %s; pausing Hot calls for %gs", why, self.cooldown_s)
            self._open_until = time.monotonic() + self.cooldown_s
            self._stale = True

    def _unavailable(self, why: str) -> StoreUnavailable:
        return StoreUnavailable(f"The Hot store (S3) {why}.", fix=_FIX)

    def close(self, wait: bool = False) -> None:
        """Stop taking calls; with ``wait``, return only once every running call has ended."""
        self._pool.shutdown(wait=wait, cancel_futures=True)


_FIX = (
    "Check the S3 endpoint (NMAFC_HOT_S3_ENDPOINT) and retry after Retry-After; "
    "acknowledged writes are safe in the Cold ROM and reach Hot when S3 answers."
)

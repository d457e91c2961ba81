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

Each call runs on a thread of its own rather than in a pool: calls abandoned at their
deadline keep their threads until the dead connection gives up, and a pool of N threads
with N such calls would queue every new call behind them, so each one would miss its
deadline too and Hot would stay down long after S3 is back. A thread costs some tens of
microseconds against the milliseconds of any LanceDB call. At most ``max_stuck``
abandoned calls may still be running; beyond that the guard refuses at once (and says
so) instead of starting more threads.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
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
        max_stuck: int = 32,
    ) -> None:
        self.timeout_s = timeout_s
        self.cooldown_s = cooldown_s
        self.max_stuck = max_stuck
        # Calls stuck on the dead server can hold the old client's connections for good:
        # the first call after a trip runs on a fresh client.
        self._reconnect = reconnect
        self._stale = False
        self._open_until = 0.0
        self._lock = threading.Lock()
        self._running: set[threading.Thread] = set()
        self._abandoned: set[threading.Thread] = set()  # missed their deadline, still running
        self._closed = False
        self._inside = threading.local()

    @property
    def open(self) -> bool:
        return time.monotonic() < self._open_until

    @property
    def stuck(self) -> int:
        """Calls abandoned at their deadline that are still running."""
        with self._lock:
            return len(self._abandoned)

    def call(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``fn(*args, **kwargs)`` within the deadline, or :class:`StoreUnavailable`."""
        if getattr(self._inside, "active", False):  # a guarded call calling another
            return fn(*args, **kwargs)
        if self.open:
            raise self._unavailable("is not answering (retrying shortly)")
        future: Future[T] = Future()
        call = functools.partial(fn, *args, **kwargs)
        reconnect = self._reconnect if self._stale else None
        thread = threading.Thread(
            target=self._run, args=(future, call, reconnect), name="nmafc-hot", daemon=True
        )
        with self._lock:
            if self._closed:
                raise self._unavailable("is closing")
            if len(self._abandoned) >= self.max_stuck:
                stuck = len(self._abandoned)
                raise self._unavailable(f"still has {stuck} calls stuck on it")
            self._running.add(thread)
        thread.start()
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            with self._lock:
                if thread in self._running:
                    self._abandoned.add(thread)
            why = f"did not answer within {self.timeout_s:g}s"
            self._trip(why)
            raise StoreUnavailable(f"The Hot store (S3) {why}.", fix=_FIX, running=future) from None
        except (StoreUnavailable, OSError, RuntimeError) as exc:  # LanceDB's I/O failures
            self._trip(f"failed: {type(exc).__name__}")
            raise

    def _run(
        self, future: Future[T], call: Callable[[], T], reconnect: Callable[[], None] | None
    ) -> None:
        self._inside.active = True
        try:
            if not future.set_running_or_notify_cancel():
                return
            try:
                if reconnect is not None:
                    reconnect()
                    self._stale = False
                future.set_result(call())
            except BaseException as exc:  # handed to the caller, as a pool would
                future.set_exception(exc)
        finally:
            self._inside.active = False
            with self._lock:
                self._running.discard(threading.current_thread())
                self._abandoned.discard(threading.current_thread())

    def _trip(self, why: str) -> None:
        with self._lock:
            if not self.open:
                log.warning("Hot store %s; pausing Hot calls for %gs", why, self.cooldown_s)
            self._open_until = time.monotonic() + self.cooldown_s
            self._stale = True

    def _unavailable(self, why: str) -> StoreUnavailable:
        return StoreUnavailable(f"The Hot store (S3) {why}.", fix=_FIX)

    def close(self, wait: bool = False) -> None:
        """Stop taking calls; with ``wait``, return only once every running call has ended.

        The threads are daemons: a process that exits without ``wait`` does not hang on a
        call stuck on a dead server (its write is in the Cold ROM's log already).
        """
        with self._lock:
            self._closed = True
            running = list(self._running)
        if wait:
            for thread in running:
                thread.join()


_FIX = (
    "Check the S3 endpoint (NMAFC_HOT_S3_ENDPOINT) and retry after Retry-After; "
    "acknowledged writes are safe in the Cold ROM and reach Hot when S3 answers."
)

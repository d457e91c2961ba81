"""Working sets loaded in the background, so a first search need not wait for its scope.

Loading a scope of 10⁵ records from storage takes seconds; a search of a scope that large
that RAM does not hold is served by the stores instead (see ``Recall._reach``), and asks
for the load here. A scope is queued once however many searches ask; a few threads load
the queue, each in an empty context: a request's deadline, its shutdown event and its log
fields stay with the request (:mod:`nmafc.deadline`), so a load that outlives the search
that asked for it is neither cut short by that search's deadline nor attributed to it.
A load that fails is logged; the next search of the scope asks again. At close, queued
loads are dropped and running ones are waited for only briefly: their threads are
daemons, and what they would have built is a cache.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from nmafc.core.scope import Scope

log = logging.getLogger(__name__)

Load = Callable[[Scope], None]


class ScopeLoads:
    """A bounded queue of scopes to load, and ``workers`` threads loading it."""

    def __init__(self, load: Load, workers: int = 2, max_queued: int = 256) -> None:
        self._load = load
        self._workers = workers
        self._max_queued = max_queued
        self._queued: OrderedDict[Scope, None] = OrderedDict()
        self._running: set[Scope] = set()
        self._threads: list[threading.Thread] = []
        self._changed = threading.Condition()
        self._closed = False
        self.failures = 0  # loads that raised (a statistic, for tests and logs)

    def start(self, scope: Scope) -> bool:
        """Queue ``scope`` for loading unless it is queued or loading already.

        False when not queued: already asked for, the queue full (a later search asks
        again), or closed.
        """
        with self._changed:
            if self._closed or scope in self._running or scope in self._queued:
                return False
            if len(self._queued) >= self._max_queued:
                return False
            self._queued[scope] = None
            if len(self._threads) < self._workers:
                # An empty context, not the caller's: see the module docstring.
                thread = threading.Thread(
                    target=contextvars.Context().run,
                    args=(self._work,),
                    name=f"nmafc-scope-load-{len(self._threads)}",
                    daemon=True,
                )
                self._threads.append(thread)
                thread.start()
            self._changed.notify()
            return True

    def pending(self, scope: Scope) -> bool:
        """True while ``scope`` is queued or loading."""
        with self._changed:
            return scope in self._queued or scope in self._running

    def close(self, timeout_s: float = 2.0) -> None:
        """Drop the queue and wait up to ``timeout_s`` for the loads in progress."""
        with self._changed:
            self._closed = True
            self._queued.clear()
            self._changed.notify_all()
            threads = list(self._threads)
        ends = time.monotonic() + timeout_s
        for thread in threads:
            thread.join(max(0.0, ends - time.monotonic()))
        if any(thread.is_alive() for thread in threads):
            log.info("a background scope load was still running at close; not waited for")

    def _work(self) -> None:
        while True:
            with self._changed:
                while not self._queued and not self._closed:
                    self._changed.wait()
                if self._closed:
                    return
                scope, _ = self._queued.popitem(last=False)
                self._running.add(scope)
            try:
                self._load(scope)
            except Exception:  # a cache left cold: the stores keep serving the scope
                self.failures += 1
                if not self._closed:
                    log.warning("background load of %s failed", scope, exc_info=True)
            finally:
                with self._changed:
                    self._running.discard(scope)

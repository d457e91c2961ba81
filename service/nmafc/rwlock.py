"""A readers-writer lock: for the RAM working sets and for the Hot table's writers.

Every recall reads a scope's working set several times (the vector scan, graph
neighbours, vectors for re-ranking, keyword postings) and a scan of 10⁵ vectors holds it
for tens of milliseconds; with a plain lock concurrent recalls of one scope queue behind
each other's scans although none of them changes anything. Writes (applying committed
events) are short and rare by comparison.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType


class SharedLock:
    """Many readers at once, or one writer.

    ``with lock:`` takes it shared (reading is the common case); ``with lock.exclusive():``
    takes it alone. A waiting writer holds back readers that arrive after it, so a steady
    stream of recalls cannot starve a write. Not reentrant: a holder must not take it
    again (a nested shared take would wait behind a queued writer that waits for it).
    """

    def __init__(self) -> None:
        self._state = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    def __enter__(self) -> SharedLock:
        with self._state:
            while self._writing or self._writers_waiting:
                self._state.wait()
            self._readers += 1
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with self._state:
            self._readers -= 1
            if self._readers == 0:
                self._state.notify_all()

    @contextmanager
    def exclusive(self, timeout_s: float | None = None) -> Iterator[bool]:
        """Hold the lock alone; yields False (without it) if ``timeout_s`` passed first.

        A writer that gives up stops holding back readers, so a bounded wait delays them
        at most ``timeout_s``.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._state:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        break
                    self._state.wait(left)
                acquired = not (self._writing or self._readers)
            finally:
                self._writers_waiting -= 1
                if not self._writers_waiting:
                    self._state.notify_all()
            if acquired:
                self._writing = True
        if not acquired:
            yield False
            return
        try:
            yield True
        finally:
            with self._state:
                self._writing = False
                self._state.notify_all()

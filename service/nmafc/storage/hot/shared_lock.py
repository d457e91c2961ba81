"""A readers-writer lock for the RAM working sets.

Every recall reads a scope's working set several times (the vector scan, graph
neighbours, vectors for re-ranking, keyword postings) and a scan of 10⁵ vectors holds it
for tens of milliseconds; with a plain lock concurrent recalls of one scope queue behind
each other's scans although none of them changes anything. Writes (applying committed
events) are short and rare by comparison.
"""

from __future__ import annotations

import threading
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
    def exclusive(self) -> Iterator[None]:
        with self._state:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._state.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._state:
                self._writing = False
                self._state.notify_all()

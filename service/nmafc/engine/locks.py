"""Per-scope serialisation inside one process.

Writers to one scope take its lock; different scopes proceed in parallel. Across
processes the Cold ROM row lock on the scope (``SELECT … FOR UPDATE``) does the same job.
The RAM tiers keep their own (``fresh_sets``) so that one thread at a time loads a scope.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from nmafc.core.scope import Scope


class ScopeLocks:
    """A lock per scope, created on demand and dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Scope, tuple[threading.RLock, int]] = {}

    @contextmanager
    def hold(self, scope: Scope) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(scope, (threading.RLock(), 0))
            self._locks[scope] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[scope]
                if users == 1:
                    del self._locks[scope]
                else:
                    self._locks[scope] = (lock, users - 1)

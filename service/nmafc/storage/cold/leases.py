"""Leases: at most one holder of a named piece of background work at a time.

On PostgreSQL a lease is a session-level advisory lock taken with ``pg_try_advisory_lock``
on a connection of its own, so N replicas sharing the database never run the same job
(one scope's maintenance, the Hot compaction) at once, and a replica that dies releases
its leases with its connection. SQLite serves one process: a process-local lock suffices.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, text


def lease_key(name: str) -> int:
    """A stable signed 64-bit key for ``name`` (the same in every replica and release)."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Leases:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._local: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    @contextmanager
    def hold(self, name: str) -> Iterator[bool]:
        """Yield True while holding the lease, False (at once) if someone else holds it."""
        if self._engine.dialect.name == "postgresql":
            with self._advisory(lease_key(name)) as held:
                yield held
            return
        with self._guard:
            lock = self._local.setdefault(name, threading.Lock())
        held = lock.acquire(blocking=False)
        try:
            yield held
        finally:
            if held:
                lock.release()

    @contextmanager
    def _advisory(self, key: int) -> Iterator[bool]:
        with self._engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            held = bool(
                conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar_one()
            )
            try:
                yield held
            finally:
                if held:
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})

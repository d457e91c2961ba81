"""Leases: at most one holder of a named piece of background work at a time.

On PostgreSQL a lease is a session-level advisory lock taken with ``pg_try_advisory_lock``
on a connection of its own, so N replicas sharing the database never run the same job
(one scope's maintenance, the Hot compaction) at once, and a replica that dies releases
its leases with its connection.

On SQLite the processes sharing the database file are the workers of one ``nmafc serve``
on one machine. A lease there is a thread lock (for the threads of one process) plus a
POSIX record lock on one byte of a ``<database>.leases`` file (for the other processes),
at an offset given by the lease's key; the kernel releases it if the process dies. Record
locks belong to the process and vanish when it closes *any* descriptor of the file, so
the file is opened once and kept open.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, text

try:
    import fcntl
except ImportError:  # Windows: one process per SQLite database
    fcntl = None  # type: ignore[assignment]

_OFFSETS = 2**62  # record-lock offsets are signed 64-bit; keep well inside them


def lease_key(name: str) -> int:
    """A stable signed 64-bit key for ``name`` (the same in every replica and release)."""
    digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Leases:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._local: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._file: int | None = None
        database = engine.url.database
        if engine.dialect.name == "sqlite" and database and database != ":memory:" and fcntl:
            path = Path(database).expanduser()
            self._file = os.open(f"{path}.leases", os.O_RDWR | os.O_CREAT, 0o600)

    def close(self) -> None:
        """Release the lease file (and with it any lease this process still holds)."""
        if self._file is not None:
            os.close(self._file)
            self._file = None

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
            if held and self._file is not None:
                with self._between_processes(lease_key(name) % _OFFSETS) as ours:
                    yield ours
            else:
                yield held
        finally:
            if held:
                lock.release()

    @contextmanager
    def _between_processes(self, offset: int) -> Iterator[bool]:
        assert self._file is not None
        assert fcntl is not None
        try:
            fcntl.lockf(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError:  # another process holds it
            yield False
            return
        try:
            yield True
        finally:
            fcntl.lockf(self._file, fcntl.LOCK_UN, 1, offset)

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

"""Physical erasure in the Cold ROM after a purge's DELETEs have committed.

SQLite: every connection runs with ``PRAGMA secure_delete=ON`` (see ``database.py``), so
the pages and cells a DELETE frees are overwritten with zeros. FTS5 keeps a deleted row's
terms in its index segments (a delete only appends a tombstone) until the segments are
merged, so ``optimize`` merges each index into one b-tree without them; it rewrites the
whole index, which is the cost of a purge on a large database (measured in the README's
erasure figures). A ``wal_checkpoint(TRUNCATE)`` then copies the zeroed pages into the
database file and empties the WAL, which still held the old page images.

PostgreSQL: a plain ``VACUUM`` marks dead tuples' space reusable without overwriting it,
and a GIN index keeps the purged lexemes, so a purge vacuums the touched tables (cheap,
no lock that blocks readers or writers) and says the bytes may remain. ``nmafc erase``
runs ``VACUUM FULL``, which rewrites each table, its TOAST table and its indexes into
new files, under an ACCESS EXCLUSIVE lock on tables every tenant shares. It still copies
the row versions an older snapshot of another session may see, so the erasure is complete
only when no session of the database held one from before the rewrite: ``erase_all`` waits
a little for such sessions to end and otherwise says which ones kept rows (visible to a role
allowed to read their ``pg_stat_activity`` rows, e.g. the tables' owner or a superuser).
"""

from __future__ import annotations

import time

from sqlalchemy import Engine, text

from nmafc.storage.cold.schema import TENANT_TABLES
from nmafc.storage.erasure import Erasure

_FTS_TABLES = ("facts_fts", "turns_fts")
_CHECKPOINT_ATTEMPTS = 3
# A checkpoint waits (busy handler) for readers of older snapshots; the connections' own
# 30 s would hold a purge's response that long behind one slow search, per attempt.
_CHECKPOINT_WAIT_MS = 2000


def erase_freed(engine: Engine) -> Erasure:
    """After a purge: zeroed pages reach the file, FTS tombstones and the WAL go."""
    if engine.dialect.name == "postgresql":
        _vacuum(engine, full=False)
        return Erasure(
            ("vacuum",),
            False,
            note="PostgreSQL's VACUUM marks the purged rows' space free without "
            "overwriting it; run `nmafc erase` (VACUUM FULL) to rewrite the tables.",
        )
    started = time.perf_counter()
    _fts_optimize(engine)
    truncated = _checkpoint(engine)
    counts = {"ms": round((time.perf_counter() - started) * 1000)}
    if not truncated:
        return Erasure(
            ("secure_delete", "fts_optimize", "wal_checkpoint"),
            False,
            counts,
            "A long-running reader kept the WAL from being emptied; old page images are "
            "overwritten as the WAL is reused, or now by `nmafc erase`.",
        )
    return Erasure(("secure_delete", "fts_optimize", "wal_truncate"), True, counts)


def erase_all(engine: Engine) -> Erasure:
    """``nmafc erase``: rewrite the whole store so no file keeps freed bytes."""
    started = time.perf_counter()
    if engine.dialect.name == "postgresql":
        _wait_for_older_snapshots(engine)
        holders = _vacuum_full(engine)
        counts = {"ms": round((time.perf_counter() - started) * 1000)}
        if holders:
            sessions = ", ".join(str(pid) for pid in holders)
            return Erasure(
                ("vacuum_full",),
                False,
                counts,
                f"Sessions {sessions} of this database held snapshots older than the "
                "rewrite, so VACUUM FULL kept the row versions they can still see; end "
                "their transactions (pg_stat_activity) and run `nmafc erase` again.",
            )
        return Erasure(
            ("vacuum_full",),
            True,
            counts,
            "WAL segments already written (pg_wal, archives) and backups are the "
            "operator's to expire.",
        )
    _fts_optimize(engine)
    with engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw is not None
        raw.execute("VACUUM")  # pages freed before secure_delete was on are dropped too
    truncated = _checkpoint(engine)
    counts = {"ms": round((time.perf_counter() - started) * 1000)}
    steps = ("fts_optimize", "vacuum", "wal_truncate" if truncated else "wal_checkpoint")
    return Erasure(steps, truncated, counts)


def _fts_optimize(engine: Engine) -> None:
    if engine.dialect.name != "sqlite":
        return
    with engine.connect().execution_options(nmafc_write=True) as conn, conn.begin():
        for table in _FTS_TABLES:
            conn.exec_driver_sql(f"INSERT INTO {table}({table}) VALUES ('optimize')")


def _checkpoint(engine: Engine) -> bool:
    """``wal_checkpoint(TRUNCATE)``; whether the WAL was emptied (readers may hold it)."""
    database = engine.url.database
    if not database or database == ":memory:":
        return True
    for attempt in range(_CHECKPOINT_ATTEMPTS):
        with engine.connect() as conn:
            # The raw connection is outside any transaction (pysqlite's implicit BEGIN is
            # off), which a checkpoint needs.
            raw = conn.connection.dbapi_connection
            assert raw is not None
            (usual,) = raw.execute("PRAGMA busy_timeout").fetchone()
            raw.execute(f"PRAGMA busy_timeout={_CHECKPOINT_WAIT_MS}")
            try:
                busy, _log, _done = raw.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                raw.execute(f"PRAGMA busy_timeout={int(usual)}")
        if not busy:
            return True
        time.sleep(0.1 * (attempt + 1))
    return False


# Sessions other than this one whose snapshot (or running write) began before ``:since``:
# the row versions such a snapshot may see survive any VACUUM.
_OLDER_SNAPSHOTS = text(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
    "AND pid <> pg_backend_pid() AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL) "
    "AND xact_start < :since ORDER BY pid"
)
_SNAPSHOT_WAIT_S = 5.0


def _older_snapshots(engine: Engine, since: object) -> list[int]:
    with engine.connect() as conn:
        return [int(pid) for (pid,) in conn.execute(_OLDER_SNAPSHOTS, {"since": since})]


def _server_now(engine: Engine) -> object:
    with engine.connect() as conn:
        return conn.execute(text("SELECT clock_timestamp()")).scalar_one()


def _wait_for_older_snapshots(engine: Engine) -> None:
    """Give transactions already open a few seconds to end before rewriting the tables."""
    now = _server_now(engine)
    deadline = time.monotonic() + _SNAPSHOT_WAIT_S
    while _older_snapshots(engine, now) and time.monotonic() < deadline:
        time.sleep(0.2)


def _vacuum_full(engine: Engine) -> list[int]:
    """Rewrite every tenant table; the sessions whose older snapshots kept row versions."""
    started = _server_now(engine)
    _vacuum(engine, full=True)
    return _older_snapshots(engine, started)


def _vacuum(engine: Engine, *, full: bool) -> None:
    command = "VACUUM (FULL, ANALYZE)" if full else "VACUUM (ANALYZE)"
    # VACUUM cannot run inside a transaction block.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in TENANT_TABLES:
            conn.execute(text(f"{command} {table}"))

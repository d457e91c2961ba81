"""The Cold ROM facade: units of work over one connection, with scoped repositories."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine, text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError, OperationalError

from nmafc.errors import NmafcError
from nmafc.storage.cold import database, erasure
from nmafc.storage.cold.events_repo import EventsRepo
from nmafc.storage.cold.facts_repo import FactsRepo
from nmafc.storage.cold.keys_repo import KeysRepo
from nmafc.storage.cold.keyword import KeywordSearch
from nmafc.storage.cold.leases import Leases
from nmafc.storage.cold.pending_repo import PendingRepo
from nmafc.storage.cold.scopes_repo import ScopeRow, ScopesRepo
from nmafc.storage.cold.turns_repo import TurnsRepo
from nmafc.storage.cold.vectors import FactVectors, VectorSearchMode
from nmafc.storage.cold.vectors import enable as enable_vectors
from nmafc.storage.erasure import Erasure

__all__ = ["ColdSession", "ColdStore", "ScopeRow"]


@dataclass(frozen=True, slots=True)
class ColdSession:
    """Repositories bound to one connection (and so to one transaction)."""

    conn: Connection
    scopes: ScopesRepo
    turns: TurnsRepo
    facts: FactsRepo
    events: EventsRepo
    search: KeywordSearch
    keys: KeysRepo
    pending: PendingRepo
    vectors: FactVectors | None  # None unless Cold semantic search is on (pgvector)

    @classmethod
    def on(cls, conn: Connection, *, vector_search: bool = False) -> ColdSession:
        vectors = FactVectors(conn) if vector_search else None
        return cls(
            conn=conn,
            scopes=ScopesRepo(conn),
            turns=TurnsRepo(conn),
            facts=FactsRepo(conn, vectors),
            events=EventsRepo(conn),
            search=KeywordSearch(conn),
            keys=KeysRepo(conn),
            pending=PendingRepo(conn),
            vectors=vectors,
        )


class ColdStore:
    """Owns the engine. ``write()`` commits at the end of its block, or rolls back on error."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._leases = Leases(engine)
        self.vector_search = False

    @classmethod
    def open(
        cls,
        uri: str,
        *,
        sqlite_synchronous: str = "FULL",
        pool_size: int = 8,
        connect_timeout_s: float = 5.0,
        migrate: bool = True,
    ) -> ColdStore:
        """Connect, and bring the schema up to date unless ``migrate`` is false."""
        engine = database.create_cold_engine(
            uri,
            sqlite_synchronous=sqlite_synchronous,
            pool_size=pool_size,
            connect_timeout_s=connect_timeout_s,
        )
        if migrate:
            database.upgrade(engine)
        return cls(engine)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @contextmanager
    def write(self) -> Iterator[ColdSession]:
        """A write transaction; the caller's block is the unit of work."""
        with (
            self._translate_errors(),
            self.engine.connect().execution_options(nmafc_write=True) as conn,
            conn.begin(),
        ):
            yield ColdSession.on(conn, vector_search=self.vector_search)

    @contextmanager
    def read(self) -> Iterator[ColdSession]:
        """A read-only snapshot (rolled back at the end)."""
        with self._translate_errors(), self.engine.connect() as conn, conn.begin() as tx:
            yield ColdSession.on(conn, vector_search=self.vector_search)
            tx.rollback()

    def ping(self) -> None:
        """Raise :class:`StoreUnavailable` unless the database answers."""
        with self._translate_errors(), self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    @contextmanager
    def lease(self, name: str) -> Iterator[bool]:
        """Hold the named lease if no one (in any replica) does; yields whether it is held."""
        with self._translate_errors(), self._leases.hold(name) as held:
            yield held

    def size_bytes(self) -> int:
        """Bytes the Cold ROM occupies (database file and WAL, or the PostgreSQL database)."""
        with self._translate_errors():
            if self.dialect == "postgresql":
                with self.engine.connect() as conn:
                    size = conn.execute(text("SELECT pg_database_size(current_database())"))
                    return int(size.scalar_one())
            database = self.engine.url.database
            if not database or database == ":memory:":
                return 0
            paths = [Path(database), Path(f"{database}-wal")]
            return sum(p.stat().st_size for p in paths if p.exists())

    def optimize(self) -> None:
        """Refresh the query planner's statistics (SQLite; PostgreSQL autovacuums)."""
        if self.dialect == "sqlite":
            with self._translate_errors(), self.engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA analysis_limit=2000")
                for table in ("facts", "turns", "events", "scopes"):
                    conn.exec_driver_sql(f"ANALYZE {table}")

    def erase_freed(self) -> Erasure:
        """After a purge: overwrite what its DELETEs freed, as far as the dialect can online."""
        with self._translate_errors():
            return erasure.erase_freed(self.engine)

    def erase_all(self) -> Erasure:
        """Rewrite the whole store (``nmafc erase``; PostgreSQL locks each table meanwhile)."""
        with self._translate_errors():
            return erasure.erase_all(self.engine)

    def pin_embedding_model(self, model: str, dim: int) -> None:
        with self._translate_errors():
            database.pin_embedding_model(self.engine, model, dim)

    def enable_vector_search(self, mode: VectorSearchMode, dim: int) -> bool:
        """Turn on semantic search of archived facts in the database (pgvector) if it can."""
        with self._translate_errors():
            self.vector_search = enable_vectors(self.engine, mode, dim)
        return self.vector_search

    def close(self) -> None:
        self._leases.close()
        self.engine.dispose()

    @contextmanager
    def _translate_errors(self) -> Iterator[None]:
        try:
            yield
        except NmafcError:
            raise
        except OperationalError as exc:
            raise database.unavailable(self.engine, exc) from exc
        except DBAPIError as exc:
            if exc.connection_invalidated:
                raise database.unavailable(self.engine, exc) from exc
            raise

"""Opening the Cold ROM: engines for SQLite and PostgreSQL, pragmas, migrations, pinning."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, select, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.pool import ConnectionPoolEntry

from nmafc.errors import (
    ConfigurationError,
    EmbeddingModelMismatch,
    MissingExtra,
    StoreNotWritable,
    StoreUnavailable,
)
from nmafc.storage.cold.schema import meta

# A constant key for the migration advisory lock, so N replicas starting together migrate once.
_MIGRATION_LOCK_KEY = 0x4E4D4146


def normalise_uri(uri: str) -> str:
    """Map user-facing URIs to SQLAlchemy URLs (``postgresql://`` → psycopg 3)."""
    if uri.startswith(("postgres://", "postgresql://")):
        return "postgresql+psycopg://" + uri.split("://", 1)[1]
    return uri


def create_cold_engine(
    uri: str, *, sqlite_synchronous: str = "FULL", pool_size: int = 8, connect_timeout_s: float = 5
) -> Engine:
    """An engine configured for NMAFC's transaction discipline on either dialect."""
    url = make_url(normalise_uri(uri))
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(uri, url.database, sqlite_synchronous)
    if url.get_backend_name() == "postgresql":
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise MissingExtra(
                "NMAFC_COLD_URI points at PostgreSQL but psycopg is not installed.",
                fix="pip install 'nmafc[postgres]'",
            ) from exc
        return create_engine(
            url,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=True,
            connect_args={"connect_timeout": int(max(1, connect_timeout_s))},
        )
    raise ConfigurationError(
        f"Unsupported Cold ROM URI {uri!r}.",
        fix="Set NMAFC_COLD_URI to sqlite:///path/to/cold.db or postgresql://user@host/db.",
    )


_SQLITE_POOL_SIZE = 32


def _sqlite_engine(uri: str, database: str | None, synchronous: str) -> Engine:
    if database and database != ":memory:":
        path = Path(database).expanduser()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreNotWritable(
                f"Cannot create the Cold ROM directory {path.parent}: {exc.strerror}."
            ) from exc
        if path.parent.exists() and not os.access(path.parent, os.W_OK):
            raise StoreNotWritable(f"The Cold ROM directory {path.parent} is not writable.")
    # Concurrent recalls each hold a connection for a moment (the API's recall slots, the
    # engine's keyword-search threads, writers): with SQLAlchemy's default of 5 pooled
    # connections the rest were opened, configured and closed on every request.
    engine = create_engine(
        normalise_uri(uri),
        connect_args={"check_same_thread": False},
        pool_size=_SQLITE_POOL_SIZE,
        max_overflow=_SQLITE_POOL_SIZE,
    )

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        # Take transaction control away from pysqlite so BEGIN IMMEDIATE is ours to issue.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA foreign_keys=ON")
        # Freed pages and cells are zeroed, so a purge leaves no readable copy of its rows
        # in the file (or, once checkpointed, the WAL). It costs a write of each page a
        # DELETE frees, which the page's own change writes anyway in most cases.
        cursor.execute("PRAGMA secure_delete=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # Writers take the lock up front; a deferred BEGIN that later writes can fail with
        # SQLITE_BUSY immediately instead of waiting on busy_timeout.
        writing = conn.get_execution_options().get("nmafc_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if writing else "BEGIN")

    return engine


def migrations_dir() -> Path:
    """The Alembic script directory, in the wheel or beside the source tree."""
    here = Path(__file__).resolve()
    packaged = here.parents[2] / "_migrations"
    if packaged.is_dir():
        return packaged
    source = here.parents[4] / "migrations"
    if source.is_dir():
        return source
    raise ConfigurationError(
        "The Cold ROM migrations are missing from this installation.",
        fix="Reinstall nmafc (pip install --force-reinstall nmafc).",
    )


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.set_main_option("file_template", "%%(year)d_%%(month).2d_%%(day).2d_%%(rev)s_%%(slug)s")
    return config


def upgrade(engine: Engine) -> None:
    """Apply every pending migration; concurrent replicas on PostgreSQL migrate one at a time."""
    config = alembic_config()
    try:
        with engine.connect().execution_options(nmafc_write=True) as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _MIGRATION_LOCK_KEY})
                conn.commit()
            try:
                with conn.begin():
                    config.attributes["connection"] = conn
                    command.upgrade(config, "head")
            finally:
                if conn.dialect.name == "postgresql":
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _MIGRATION_LOCK_KEY})
                    conn.commit()
    except OperationalError as exc:
        raise unavailable(engine, exc) from exc


def pin_embedding_model(engine: Engine, model: str, dim: int) -> None:
    """Record the store's embedding model on first open; refuse a different one later."""
    with engine.connect().execution_options(nmafc_write=True) as conn, conn.begin():
        rows = dict(conn.execute(select(meta.c.key, meta.c.value)).all())
        if "embedding_model" not in rows:
            conn.execute(
                meta.insert(),
                [
                    {"key": "embedding_model", "value": model},
                    {"key": "embedding_dim", "value": str(dim)},
                ],
            )
            return
    if rows["embedding_model"] != model or int(rows["embedding_dim"]) != dim:
        raise EmbeddingModelMismatch(
            f"This Cold ROM was written with {rows['embedding_model']} "
            f"({rows['embedding_dim']}-d); the configured embedder is {model} ({dim}-d)."
        )


def unavailable(engine: Engine, exc: Exception) -> StoreUnavailable | StoreNotWritable:
    """A 503-class error that names the Cold ROM without leaking credentials."""
    where = engine.url.render_as_string(hide_password=True)
    if engine.dialect.name == "sqlite":
        message = str(exc).lower()
        if "readonly" in message or "read-only" in message or "disk" in message:
            return StoreNotWritable(f"The Cold ROM at {where} is not writable: {exc}.")
    return StoreUnavailable(f"The Cold ROM at {where} is unreachable: {type(exc).__name__}.")

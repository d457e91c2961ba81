"""Cold ROM tables (SQLAlchemy Core), shared by SQLite and PostgreSQL.

Keyword-search structures differ by dialect and are created by the migrations, not here:
SQLite gets FTS5 tables kept in step by triggers, PostgreSQL gets generated ``tsvector``
columns with GIN indexes.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL wants BIGINT for logs.
RowId = BigInteger().with_variant(Integer(), "sqlite")
Json = JSON().with_variant(JSONB(), "postgresql")
Id = String(128)


class UtcDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC in and out, on SQLite (which stores naive text) as on PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        utc = aware.astimezone(UTC)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


Timestamp = UtcDateTime()

meta = Table(
    "meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

scopes = Table(
    "scopes",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    Column("agent_id", Id, nullable=False),
    Column("conversation_id", Id, nullable=False),
    Column("turn", Float, nullable=False, default=0.0),
    Column("seq", BigInteger, nullable=False, default=0),
    Column("maintained_seq", BigInteger, nullable=False, default=0),
    Column("maintained_turn", Float, nullable=False, default=0.0),
    Column("created_at", Timestamp, nullable=False),
    Column("updated_at", Timestamp, nullable=False),
    UniqueConstraint("agent_id", "conversation_id"),
    sqlite_autoincrement=True,
)

# Maintenance finds the scopes it is due for through this index, not a walk of every agent:
# a scope is due once its clock moved ``every_turns`` since its last pass.
Index("ix_scopes_unmaintained", scopes.c.turn - scopes.c.maintained_turn)

turns = Table(
    "turns",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    Column("scope_id", BigInteger, nullable=False),
    Column("agent_id", Id, nullable=False),
    Column("conversation_id", Id, nullable=False),
    Column("turn", Float, nullable=False),
    Column("role", String(32), nullable=False),
    Column("speaker", String(128), nullable=False),
    Column("content", Text, nullable=False),
    Column("occurred_at", Timestamp, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("extra", Json, nullable=True),
    Column("retracted", Boolean, nullable=False, default=False),
    Index(None, "agent_id", "conversation_id", "turn"),
    sqlite_autoincrement=True,
)

facts = Table(
    "facts",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    Column("record_id", String(36), nullable=False),
    Column("version", Integer, nullable=False),
    Column("scope_id", BigInteger, nullable=False),
    Column("agent_id", Id, nullable=False),
    Column("conversation_id", Id, nullable=False),
    Column("entity", String(256), nullable=False),
    Column("content", Text, nullable=False),
    Column("tier", String(16), nullable=False),
    Column("importance", Float, nullable=False),
    Column("related_entities", Json, nullable=False),
    Column("source_turn_ids", Json, nullable=False),
    Column("valid_at", Float, nullable=False),
    Column("valid_at_time", Timestamp, nullable=False),
    Column("invalid_at", Float, nullable=True),
    Column("invalid_at_time", Timestamp, nullable=True),
    Column("invalid_reason", String(16), nullable=True),
    Column("weight0", Float, nullable=False),
    Column("anchor_turn", Float, nullable=False),
    Column("k", Integer, nullable=False),
    Column("expires_turn", Float, nullable=True),
    Column("created_at", Timestamp, nullable=False),
    Column("embedding", LargeBinary, nullable=True),
    Index("ix_facts_record_id_version", "record_id", "version", unique=True),
    Index(None, "agent_id", "conversation_id", "entity"),
    Index(None, "agent_id", "conversation_id", "expires_turn"),
    Index(None, "agent_id", "conversation_id", "k"),
    sqlite_autoincrement=True,
)

events = Table(
    "events",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    Column("agent_id", Id, nullable=False),
    Column("conversation_id", Id, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("turn", Float, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("record_id", String(36), nullable=True),
    Column("payload", Json, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    UniqueConstraint("agent_id", "conversation_id", "seq"),
    Index(None, "agent_id", "record_id"),
    Index(None, "agent_id", "id"),
    sqlite_autoincrement=True,
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    Column("key_hash", String(128), nullable=False, unique=True),
    Column("prefix", String(16), nullable=False),
    Column("agent_id", Id, nullable=True),
    Column("is_admin", Boolean, nullable=False, default=False),
    Column("name", String(128), nullable=False, default=""),
    Column("created_at", Timestamp, nullable=False),
    Column("revoked_at", Timestamp, nullable=True),
    sqlite_autoincrement=True,
)

# Exchanges the chat proxy must remember: committed before the reply is acknowledged,
# marked done in the same transaction as the turns they became (so never applied twice).
pending_exchanges = Table(
    "pending_exchanges",
    metadata,
    Column("id", RowId, primary_key=True, autoincrement=True),
    Column("agent_id", Id, nullable=False),
    Column("conversation_id", Id, nullable=False),
    Column("messages", Json, nullable=False),
    Column("created_at", Timestamp, nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("last_error", Text, nullable=True),
    Column("done_at", Timestamp, nullable=True),
    Index(None, "agent_id", "conversation_id", "done_at"),
    Index(None, "done_at"),
    sqlite_autoincrement=True,
)

# Tables that hold tenant data; every query on them must filter by agent_id.
TENANT_TABLES = ("turns", "facts", "events", "scopes", "pending_exchanges")

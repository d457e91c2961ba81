"""Semantic search inside the Cold ROM, on PostgreSQL with the pgvector extension.

Facts that decayed out of the working set leave the Hot store. Without pgvector each
replica keeps a RAM index of their embeddings (``engine/archive.py``); with it, the
embeddings sit in ``fact_vectors`` next to the facts and the database answers "nearest
archived facts of this scope" itself, so a replica holds no archive in RAM and every
replica sees the same archive.

The table is created at start-up rather than by a migration: its column has the store's
pinned embedding dimension, and the extension may be installed after the schema exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from sqlalchemy import (
    BigInteger,
    Column,
    Engine,
    Float,
    Index,
    MetaData,
    Table,
    and_,
    cast,
    insert,
    literal,
    select,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.types import UserDefinedType

from nmafc.core.lifecycle import DECAYED
from nmafc.core.scope import AnyScope
from nmafc.errors import ConfigurationError
from nmafc.storage.cold.filters import where_scope
from nmafc.storage.cold.schema import Id, facts

Vector = npt.NDArray[np.float32]
VectorSearchMode = Literal["auto", "on", "off"]


class PgVector(UserDefinedType[str]):
    """pgvector's ``vector`` column; values travel as its text form ``[x,y,…]``."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "vector"


# Its own metadata: the table exists only where pgvector does, never on SQLite.
vector_metadata = MetaData()
fact_vectors = Table(
    "fact_vectors",
    vector_metadata,
    Column("fact_id", BigInteger, primary_key=True),
    Column("agent_id", Id, nullable=False),
    Column("conversation_id", Id, nullable=False),
    Column("embedding", PgVector(), nullable=False),
    Index("ix_fact_vectors_agent_id_conversation_id", "agent_id", "conversation_id"),
)

# One session at a time creates the extension and the table (replicas start together).
_SETUP_LOCK = 0x6E6D6166_63766563  # "nmafcvec"


def as_text(vector: Vector) -> str:
    return "[" + ",".join(f"{float(x):.7g}" for x in np.asarray(vector).ravel()) + "]"


def enable(engine: Engine, mode: VectorSearchMode, dim: int) -> bool:
    """Create what Cold semantic search needs; True if it is on.

    ``auto`` turns it on where PostgreSQL has pgvector, ``on`` insists, ``off`` never.
    """
    if mode == "off":
        return False
    if engine.dialect.name != "postgresql":
        if mode == "on":
            raise ConfigurationError(
                "Cold ROM semantic search needs PostgreSQL with the pgvector extension; "
                f"the Cold ROM is {engine.dialect.name}.",
                fix="Set NMAFC_COLD_VECTOR_SEARCH=auto (or off), or point NMAFC_COLD_URI at "
                "a PostgreSQL with pgvector.",
            )
        return False
    with engine.begin() as conn:
        installed = conn.execute(
            text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        ).first()
        if installed is None:
            if mode == "on":
                raise ConfigurationError(
                    "PostgreSQL has no pgvector extension, and NMAFC_COLD_VECTOR_SEARCH=on.",
                    fix="Install pgvector on the server (e.g. the postgresql-16-pgvector "
                    "package), or set NMAFC_COLD_VECTOR_SEARCH=auto to use the RAM archive.",
                )
            return False
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SETUP_LOCK})
        conn.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
        conn.execute(
            text(
                "CREATE TABLE IF NOT EXISTS fact_vectors ("
                " fact_id BIGINT PRIMARY KEY REFERENCES facts (id) ON DELETE CASCADE,"
                " agent_id VARCHAR(128) NOT NULL,"
                " conversation_id VARCHAR(128) NOT NULL,"
                f" embedding vector({int(dim)}) NOT NULL)"
            )
        )
        conn.execute(
            text(
                "CREATE INDEX IF NOT EXISTS ix_fact_vectors_agent_id_conversation_id"
                " ON fact_vectors (agent_id, conversation_id)"
            )
        )
        _backfill(conn)
    return True


def _backfill(conn: Connection) -> None:
    """Copy embeddings of facts written before the table existed (once, in batches)."""
    while True:
        rows = conn.execute(
            select(facts.c.id, facts.c.agent_id, facts.c.conversation_id, facts.c.embedding)
            .outerjoin(fact_vectors, fact_vectors.c.fact_id == facts.c.id)
            .where(facts.c.embedding.is_not(None), fact_vectors.c.fact_id.is_(None))
            .limit(2000)
        ).all()
        if not rows:
            return
        FactVectors(conn).insert(
            [
                (r.id, r.agent_id, r.conversation_id, np.frombuffer(r.embedding, dtype="<f4"))
                for r in rows
            ]
        )


class FactVectors:
    """The ``fact_vectors`` rows of one connection's transaction."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def insert(self, rows: Sequence[tuple[int, str, str, Vector]]) -> None:
        if not rows:
            return
        self._conn.execute(
            insert(fact_vectors),
            [
                {"fact_id": fid, "agent_id": agent, "conversation_id": conv,
                 "embedding": as_text(vector)}
                for fid, agent, conv, vector in rows
            ],
        )  # fmt: skip

    def nearest_decayed(
        self, scope: AnyScope, query: Vector, limit: int, record_columns: Sequence[Column[Any]]
    ) -> list[tuple[Any, float]]:
        """The ``limit`` archived or expired facts nearest ``query`` (rows, cosine)."""
        distance = fact_vectors.c.embedding.op("<=>", return_type=Float())(
            cast(literal(as_text(query)), PgVector())
        )
        newer = facts.alias("newer")
        latest = (
            ~select(newer.c.id)
            .where(
                newer.c.agent_id == facts.c.agent_id,
                newer.c.conversation_id == facts.c.conversation_id,
                newer.c.record_id == facts.c.record_id,
                newer.c.version > facts.c.version,
            )
            .exists()
        )
        rows = self._conn.execute(
            select(*record_columns, distance.label("distance"))
            .select_from(fact_vectors.join(facts, facts.c.id == fact_vectors.c.fact_id))
            .where(
                where_scope(fact_vectors, scope),
                where_scope(facts, scope),
                and_(facts.c.invalid_reason.in_(sorted(DECAYED)), latest),
            )
            .order_by(distance)
            .limit(limit)
        ).all()
        return [(r, 1.0 - float(r.distance)) for r in rows]

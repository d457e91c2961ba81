"""Initial Cold ROM: scopes, turns, facts, events, api_keys, meta, and keyword search.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Id = sa.String(128)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "meta",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "scopes",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("agent_id", Id, nullable=False),
        sa.Column("conversation_id", Id, nullable=False),
        sa.Column("turn", sa.Float, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("maintained_seq", sa.BigInteger, nullable=False),
        sa.Column("maintained_turn", sa.Float, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("updated_at", Ts, nullable=False),
        sa.UniqueConstraint(
            "agent_id", "conversation_id", name="uq_scopes_agent_id_conversation_id"
        ),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "turns",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("scope_id", sa.BigInteger, nullable=False),
        sa.Column("agent_id", Id, nullable=False),
        sa.Column("conversation_id", Id, nullable=False),
        sa.Column("turn", sa.Float, nullable=False),
        sa.Column("role", sa.String(32), nullable=False),
        sa.Column("speaker", sa.String(128), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("occurred_at", Ts, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("extra", Json, nullable=True),
        sa.Column("retracted", sa.Boolean, nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_turns_agent_id_conversation_id_turn", "turns", ["agent_id", "conversation_id", "turn"]
    )
    op.create_table(
        "facts",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("scope_id", sa.BigInteger, nullable=False),
        sa.Column("agent_id", Id, nullable=False),
        sa.Column("conversation_id", Id, nullable=False),
        sa.Column("entity", sa.String(256), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("tier", sa.String(16), nullable=False),
        sa.Column("importance", sa.Float, nullable=False),
        sa.Column("related_entities", Json, nullable=False),
        sa.Column("source_turn_ids", Json, nullable=False),
        sa.Column("valid_at", sa.Float, nullable=False),
        sa.Column("valid_at_time", Ts, nullable=False),
        sa.Column("invalid_at", sa.Float, nullable=True),
        sa.Column("invalid_at_time", Ts, nullable=True),
        sa.Column("invalid_reason", sa.String(16), nullable=True),
        sa.Column("weight0", sa.Float, nullable=False),
        sa.Column("anchor_turn", sa.Float, nullable=False),
        sa.Column("k", sa.Integer, nullable=False),
        sa.Column("expires_turn", sa.Float, nullable=True),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("embedding", sa.LargeBinary, nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_facts_record_id_version", "facts", ["record_id", "version"], unique=True)
    for columns in (
        ["agent_id", "conversation_id", "entity"],
        ["agent_id", "conversation_id", "expires_turn"],
        ["agent_id", "conversation_id", "k"],
    ):
        op.create_index(f"ix_facts_{'_'.join(columns)}", "facts", columns)
    op.create_table(
        "events",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("agent_id", Id, nullable=False),
        sa.Column("conversation_id", Id, nullable=False),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("turn", sa.Float, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("record_id", sa.String(36), nullable=True),
        sa.Column("payload", Json, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.UniqueConstraint(
            "agent_id", "conversation_id", "seq", name="uq_events_agent_id_conversation_id_seq"
        ),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_events_agent_id_record_id", "events", ["agent_id", "record_id"])
    op.create_index("ix_events_agent_id_id", "events", ["agent_id", "id"])
    op.create_table(
        "api_keys",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("key_hash", sa.String(128), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("agent_id", Id, nullable=True),
        sa.Column("is_admin", sa.Boolean, nullable=False),
        sa.Column("name", sa.String(128), nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("revoked_at", Ts, nullable=True),
        sa.UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
        sqlite_autoincrement=True,
    )
    if op.get_bind().dialect.name == "postgresql":
        _postgres_keyword_search()
    else:
        _sqlite_keyword_search()
        _sqlite_planner_hints()


# Expected rows per distinct index prefix, as ANALYZE would record them for a large store.
# Without statistics SQLite ranks every (agent, conversation) index above a lookup by record
# id and scans the whole scope; seeding sqlite_stat1 is SQLite's documented way to steer the
# planner until a real ANALYZE (run by maintenance) replaces these numbers.
_SQLITE_STATS = {
    ("facts", "ix_facts_record_id_version"): "1000000 1 1",
    ("facts", "ix_facts_agent_id_conversation_id_entity"): "1000000 100000 10000 3",
    ("facts", "ix_facts_agent_id_conversation_id_expires_turn"): "1000000 100000 10000 10",
    ("facts", "ix_facts_agent_id_conversation_id_k"): "1000000 100000 10000 1000",
    ("turns", "ix_turns_agent_id_conversation_id_turn"): "1000000 100000 10000 1",
    ("events", "ix_events_agent_id_record_id"): "1000000 100000 3",
    ("events", "ix_events_agent_id_id"): "1000000 100000 1",
}


def _sqlite_planner_hints() -> None:
    # ANALYZE of one plain table creates sqlite_stat1; a full ANALYZE would also record the
    # empty FTS shadow tables as tiny, and FTS inserts then slow down as the index grows.
    op.execute("ANALYZE meta")
    for (table, index), stat in _SQLITE_STATS.items():
        op.execute(
            sa.text("INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (:t, :i, :s)").bindparams(
                t=table, i=index, s=stat
            )
        )
    op.execute("ANALYZE sqlite_master")  # load the seeded numbers into this connection


def _postgres_keyword_search() -> None:
    op.execute(
        "ALTER TABLE facts ADD COLUMN search tsvector GENERATED ALWAYS AS "
        "(to_tsvector('english', replace(entity, '_', ' ') || ' ' || content)) STORED"
    )
    op.execute("CREATE INDEX ix_facts_search ON facts USING gin (search)")
    op.execute(
        "ALTER TABLE turns ADD COLUMN search tsvector GENERATED ALWAYS AS "
        "(to_tsvector('english', speaker || ' ' || content)) STORED"
    )
    op.execute("CREATE INDEX ix_turns_search ON turns USING gin (search)")


def _sqlite_keyword_search() -> None:
    # Each FTS row carries its scope ("s<scope_id>") and agent as indexed columns, so a
    # scoped MATCH is an index intersection rather than a post-filter over every tenant.
    searchable = {
        "facts": {"entity": "replace(new.entity, '_', ' ')", "content": "new.content"},
        "turns": {"speaker": "new.speaker", "content": "new.content"},
    }
    for table, columns in searchable.items():
        names = ", ".join(columns)
        values = ", ".join(columns.values())
        assignments = ", ".join(f"{name} = {value}" for name, value in columns.items())
        op.execute(
            f"CREATE VIRTUAL TABLE {table}_fts USING fts5("
            f"scope, agent, {names}, tokenize='porter unicode61')"
        )
        op.execute(
            f"CREATE TRIGGER {table}_fts_insert AFTER INSERT ON {table} BEGIN "
            f"INSERT INTO {table}_fts(rowid, scope, agent, {names}) "
            f"VALUES (new.id, 's' || new.scope_id, new.agent_id, {values}); END"
        )
        op.execute(
            f"CREATE TRIGGER {table}_fts_delete AFTER DELETE ON {table} BEGIN "
            f"DELETE FROM {table}_fts WHERE rowid = old.id; END"
        )
        op.execute(
            f"CREATE TRIGGER {table}_fts_update AFTER UPDATE OF {names} ON {table} BEGIN "
            f"UPDATE {table}_fts SET {assignments} WHERE rowid = new.id; END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        for table in ("facts", "turns"):
            for suffix in ("insert", "delete", "update"):
                op.execute(f"DROP TRIGGER IF EXISTS {table}_fts_{suffix}")
            op.execute(f"DROP TABLE IF EXISTS {table}_fts")
    for table in ("api_keys", "events", "facts", "turns", "scopes", "meta"):
        op.drop_table(table)

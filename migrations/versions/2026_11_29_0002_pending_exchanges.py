"""The chat proxy's durable remember queue: ``pending_exchanges``.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
Id = sa.String(128)
Ts = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "pending_exchanges",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("agent_id", Id, nullable=False),
        sa.Column("conversation_id", Id, nullable=False),
        sa.Column("messages", Json, nullable=False),
        sa.Column("created_at", Ts, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.Text, nullable=True),
        sa.Column("done_at", Ts, nullable=True),
        sqlite_autoincrement=True,
    )
    op.create_index(
        "ix_pending_exchanges_agent_id_conversation_id_done_at",
        "pending_exchanges",
        ["agent_id", "conversation_id", "done_at"],
    )
    op.create_index("ix_pending_exchanges_done_at", "pending_exchanges", ["done_at"])


def downgrade() -> None:
    op.drop_index("ix_pending_exchanges_done_at", table_name="pending_exchanges")
    op.drop_index(
        "ix_pending_exchanges_agent_id_conversation_id_done_at", table_name="pending_exchanges"
    )
    op.drop_table("pending_exchanges")

"""An index over how far each scope's clock moved since its last maintenance pass.

The maintenance service asks for the scopes it is due for; without this index that was a
walk over every agent's scopes, whatever few were due.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_scopes_unmaintained", "scopes", [sa.text("(turn - maintained_turn)")])


def downgrade() -> None:
    op.drop_index("ix_scopes_unmaintained", table_name="scopes")

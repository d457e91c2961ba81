"""Alembic environment: one migration history for SQLite and PostgreSQL.

NMAFC runs these on start-up (and with ``nmafc migrate``), passing its own connection in
``config.attributes["connection"]``; a URL in ``sqlalchemy.url`` works too.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from nmafc.storage.cold.schema import metadata

config = context.config


def run_migrations() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as conn:
        context.configure(
            connection=conn,
            target_metadata=metadata,
            render_as_batch=conn.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()


run_migrations()

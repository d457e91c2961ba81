"""One migration history builds the same schema on SQLite and PostgreSQL."""

import re
import warnings
from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from nmafc.storage.cold import ColdStore
from nmafc.storage.cold.database import migrations_dir
from nmafc.storage.cold.schema import metadata


def _diff_ignoring_search_structures(store: ColdStore) -> list[object]:
    with store.engine.connect() as conn:
        context = MigrationContext.configure(conn)
        with warnings.catch_warnings():
            # SQLite cannot reflect ix_scopes_unmaintained (an expression index), so it is
            # not compared there; test_due_scopes checks that the planner uses it.
            warnings.filterwarnings("ignore", message=".*expression-based index")
            diffs = compare_metadata(context, metadata)

    def is_search_structure(diff: object) -> bool:
        text_form = repr(diff)
        return "_fts" in text_form or "search" in text_form or "alembic_version" in text_form

    return [d for d in diffs if not is_search_structure(d)]


def test_upgrade_from_empty_matches_the_declared_schema(cold_uri: str) -> None:
    store = ColdStore.open(cold_uri)
    try:
        assert _diff_ignoring_search_structures(store) == []
        tables = set(inspect(store.engine).get_table_names())
        assert {"meta", "scopes", "turns", "facts", "events", "api_keys"} <= tables
    finally:
        store.close()


def test_keyword_search_structures_exist_per_dialect(cold_uri: str) -> None:
    store = ColdStore.open(cold_uri)
    try:
        with store.engine.connect() as conn:
            if store.dialect == "postgresql":
                kinds = conn.execute(
                    text(
                        "SELECT table_name, data_type FROM information_schema.columns "
                        "WHERE column_name = 'search' AND table_schema = current_schema()"
                    )
                ).all()
                assert sorted(kinds) == [("facts", "tsvector"), ("turns", "tsvector")]
                indexes = (
                    conn.execute(
                        text(
                            "SELECT indexdef FROM pg_indexes WHERE indexname LIKE 'ix_%_search' "
                            "AND schemaname = current_schema()"
                        )
                    )
                    .scalars()
                    .all()
                )
                assert len(indexes) == 2
                assert all("gin" in i.lower() for i in indexes)
            else:
                names = (
                    conn.execute(
                        text("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")
                    )
                    .scalars()
                    .all()
                )
                assert {"facts_fts", "turns_fts", "facts_fts_insert", "turns_fts_delete"} <= set(
                    names
                )
                assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
    finally:
        store.close()


def _schema_and_revision(store: ColdStore) -> tuple[str | None, dict[str, list[str]]]:
    with store.engine.connect() as conn:
        revision = MigrationContext.configure(conn).get_current_revision()
    inspector = inspect(store.engine)
    columns = {
        table: sorted(c["name"] for c in inspector.get_columns(table))
        for table in inspector.get_table_names()
    }
    return revision, columns


def test_upgrading_twice_is_a_no_op(cold_uri: str) -> None:
    first = ColdStore.open(cold_uri)
    try:
        before = _schema_and_revision(first)
    finally:
        first.close()
    second = ColdStore.open(cold_uri)  # runs the upgrade again on an up-to-date database
    try:
        after = _schema_and_revision(second)
        assert _diff_ignoring_search_structures(second) == []
    finally:
        second.close()
    assert before[0] is not None
    assert after == before


def test_migration_files_are_date_prefixed() -> None:
    files = sorted(p.name for p in (migrations_dir() / "versions").glob("*.py"))
    assert files
    assert all(re.match(r"^\d{4}_\d{2}_\d{2}_\w+\.py$", f) for f in files)
    assert isinstance(migrations_dir(), Path)


def test_sqlite_looks_records_up_by_id_even_before_any_analyze(tmp_path: Path) -> None:
    store = ColdStore.open(f"sqlite:///{tmp_path / 'cold.db'}")
    try:
        with store.engine.connect() as conn:
            plan = conn.exec_driver_sql(
                "EXPLAIN QUERY PLAN SELECT * FROM facts WHERE agent_id = 'a' "
                "AND conversation_id = 'c' AND record_id IN ('x', 'y')"
            ).all()
        assert "ix_facts_record_id_version" in str(plan)
    finally:
        store.close()

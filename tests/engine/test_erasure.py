"""Purge erases physically: the purged text is in no file, no object, no relation file."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from nmafc.core.scope import AgentScope, Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.settings import Settings

from ..conftest import POSTGRES_ADMIN_URL, S3Server, engine_settings
from ..erasure import files_holding, objects_holding, phrase, postgres_files_holding
from .helpers import assert_consistent, say


def _write_secret(engine: MemoryEngine, scope: Scope, token: str) -> None:
    engine.remember(scope, [say(f"My locker code is {token}, keep it safe.")])
    engine.remember(scope, [say("I also like long walks.")])
    # A search and an update put the phrase through the read paths and a second version.
    assert token in engine.recall(scope, f"locker code {token}", RecallOptions()).context
    record = next(r for r in engine.working_set(scope).values() if token in r.content)
    engine.update(scope, record.id, content=f"Caroline's locker code is {token}.")
    engine.flush()


def test_a_purged_phrase_is_in_no_file_of_the_data_directory(
    engine: MemoryEngine, settings: Settings, scope: Scope
) -> None:
    token, kept = phrase(), phrase()
    neighbour = Scope(scope.agent_id, "other-conversation")
    _write_secret(engine, scope, token)
    engine.remember(neighbour, [say(f"The neighbour's code is {kept}.")])
    assert files_holding(settings.data_dir, token), "the phrase never reached the disk"

    receipt = engine.purge(scope)

    assert files_holding(settings.data_dir, token) == []
    assert receipt.erased["hot"].complete
    assert receipt.erased["hot"].counts["versions_removed"] > 0
    if engine.ctx.cold.dialect == "sqlite":
        assert receipt.erased["cold"].complete
        assert receipt.erased["cold"].steps == ("secure_delete", "fts_optimize", "wal_truncate")
    # The neighbour is intact: searchable by its phrase, and Hot equals the log.
    result = engine.recall(neighbour, f"code {kept}", RecallOptions(reinforce=False))
    assert kept in result.context
    assert_consistent(engine, neighbour)
    assert files_holding(settings.data_dir, kept)


def test_an_agent_purge_erases_every_conversation_and_spares_other_agents(
    engine: MemoryEngine, settings: Settings
) -> None:
    gone, stays = f"agent-{uuid.uuid4().hex[:8]}", f"agent-{uuid.uuid4().hex[:8]}"
    tokens = [phrase() for _ in range(3)]
    for index, token in enumerate(tokens):
        engine.remember(Scope(gone, f"c{index}"), [say(f"Secret number {index} is {token}.")])
    kept = phrase()
    engine.remember(Scope(stays, "c0"), [say(f"Public note {kept}.")])
    engine.flush()

    receipt = engine.purge(AgentScope(gone))

    assert receipt.cold["scopes"] == 3
    for token in tokens:
        assert files_holding(settings.data_dir, token) == []
    assert kept in engine.recall(Scope(stays, "c0"), kept, RecallOptions(reinforce=False)).context
    assert_consistent(engine, Scope(stays, "c0"))


@pytest.mark.postgres
def test_on_postgres_purge_vacuums_and_erase_leaves_no_relation_file_holding_the_phrase(
    postgres_uri: str, shared_embedder: object, tmp_path: Path
) -> None:
    settings = engine_settings(tmp_path, postgres_uri)
    schema = postgres_uri.rsplit("%3D", 1)[1]
    scope, neighbour = Scope("agent-pg", "secret"), Scope("agent-pg", "kept")
    token, kept = phrase(), phrase()
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        _write_secret(engine, scope, token)
        engine.remember(neighbour, [say(f"The neighbour's code is {kept}.")])
        read, before = postgres_files_holding(POSTGRES_ADMIN_URL, schema, token)
        assert read > 0
        assert before, "the phrase never reached the relation files"

        receipt = engine.purge(scope)
        # A plain VACUUM marks the dead tuples' space free but does not overwrite it: the
        # receipt must not claim more than that.
        assert receipt.erased["cold"].steps == ("vacuum",)
        assert not receipt.erased["cold"].complete
        assert files_holding(tmp_path, token) == []

        report = engine.erase()
        assert report["cold"].steps == ("vacuum_full",)
        assert report["cold"].complete
        read, after = postgres_files_holding(POSTGRES_ADMIN_URL, schema, token)
        assert read > 0
        assert after == []
        assert postgres_files_holding(POSTGRES_ADMIN_URL, schema, kept)[1]
        assert kept in engine.recall(neighbour, kept, RecallOptions(reinforce=False)).context
        assert_consistent(engine, neighbour)
    finally:
        engine.close()


@pytest.mark.postgres
def test_on_postgres_erase_says_which_session_kept_rows_and_completes_once_it_ends(
    postgres_uri: str, shared_embedder: object, tmp_path: Path
) -> None:
    """VACUUM FULL copies the row versions an older snapshot can still see; the receipt
    must not call that complete (it did, while the phrase was still in the files)."""
    settings = engine_settings(tmp_path, postgres_uri)
    schema = postgres_uri.rsplit("%3D", 1)[1]
    scope, token = Scope("agent-pg", "secret"), phrase()
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    holder = create_engine(POSTGRES_ADMIN_URL).connect()
    try:
        _write_secret(engine, scope, token)
        reader = holder.begin()  # a report's long REPEATABLE READ, say
        holder.exec_driver_sql("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        # A snapshot that touched none of the tables: it holds no lock VACUUM FULL waits
        # for, yet the rows it may see must be kept.
        holder.exec_driver_sql("SELECT count(*) FROM pg_class")
        pid = holder.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        engine.purge(scope)

        held = engine.erase()["cold"]
        assert not held.complete
        assert held.note is not None
        # Other sessions of the database (a parallel test's) may be named beside it.
        named = re.match(r"Sessions ([\d, ]+) of this database", held.note)
        assert named is not None
        assert str(pid) in named[1].split(", ")
        assert "run `nmafc erase` again" in held.note
        assert postgres_files_holding(POSTGRES_ADMIN_URL, schema, token)[1]

        reader.rollback()
        report = engine.erase()["cold"]
        assert report.complete
        assert postgres_files_holding(POSTGRES_ADMIN_URL, schema, token)[1] == []
    finally:
        holder.close()
        engine.close()


@pytest.mark.s3
def test_on_s3_a_purged_phrase_is_in_no_object_of_the_bucket(
    s3_server: S3Server, shared_embedder: object, tmp_path: Path
) -> None:
    prefix = f"hot-{uuid.uuid4().hex[:8]}"
    settings = Settings(
        data_dir=tmp_path,
        consolidation={"inline": False},  # type: ignore[arg-type]
        extractor="verbatim",
        hot={  # type: ignore[arg-type]
            "uri": s3_server.uri(prefix),
            "s3_endpoint": s3_server.endpoint,
            "s3_access_key_id": s3_server.access_key,
            "s3_secret_access_key": s3_server.secret_key,
            "s3_allow_http": True,
        },
    )
    scope, neighbour = Scope("agent-s3", "secret"), Scope("agent-s3", "kept")
    token, kept = phrase(), phrase()
    client = s3_server.client()
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        _write_secret(engine, scope, token)
        engine.remember(neighbour, [say(f"The neighbour's code is {kept}.")])
        assert objects_holding(client, s3_server.bucket, prefix, token)[1]

        receipt = engine.purge(scope)

        read, hits = objects_holding(client, s3_server.bucket, prefix, token)
        assert read > 0
        assert hits == []
        assert files_holding(tmp_path, token) == []
        assert receipt.erased["hot"].complete
        assert objects_holding(client, s3_server.bucket, prefix, kept)[1]
        assert kept in engine.recall(neighbour, kept, RecallOptions(reinforce=False)).context
        assert_consistent(engine, neighbour)
    finally:
        engine.close()


def test_a_purge_beside_a_long_reader_answers_and_says_the_wal_was_not_emptied(
    tmp_path: Path, shared_embedder: object
) -> None:
    settings = Settings(
        data_dir=tmp_path,
        consolidation={"inline": False},  # type: ignore[arg-type]
        extractor="verbatim",
    )
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    scope, token = Scope("agent-w", "c"), phrase()
    try:
        engine.remember(scope, [say(f"Alarm code {token}.")])
        with engine.ctx.cold.read() as session:
            # An open snapshot (a slow search, another worker process) pins the WAL.
            session.conn.exec_driver_sql("SELECT count(*) FROM turns").one()
            receipt = engine.purge(scope)
        cold = receipt.erased["cold"]
        assert cold.steps == ("secure_delete", "fts_optimize", "wal_checkpoint")
        assert not cold.complete
        assert cold.note is not None
        assert "nmafc erase" in cold.note
        assert receipt.erased["hot"].complete
        # Once the reader is gone, the next erasure empties the WAL.
        assert engine.ctx.cold.erase_freed().complete
        assert files_holding(tmp_path, token) == []
    finally:
        engine.close()

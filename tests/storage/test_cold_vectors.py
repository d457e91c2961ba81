"""Cold ROM semantic search (pgvector): archived facts are found by meaning in the database.

pgvector is not packaged for this machine's PostgreSQL, so these tests run on the
PostgreSQL 16 + pgvector that the ``pgserver`` wheel bundles; where that cannot start they
skip and say why. The machine's PostgreSQL (no pgvector) shows the fallback.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.errors import ConfigurationError
from nmafc.settings import Settings

from ..engine.helpers import let_turns_pass
from ..needs import missing
from .test_tenant_scoping import unscoped_statements

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pgvector_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL with pgvector (from the pgserver wheel), as an SQLAlchemy URL."""
    try:
        import pgserver
    except ImportError:
        missing("The pgserver wheel (PostgreSQL with pgvector)", "pip install 'nmafc[dev]'")
    try:
        server = pgserver.get_server(tmp_path_factory.mktemp("pgvector"), cleanup_mode="stop")
    except Exception as exc:  # the bundled server could not start here
        missing(f"A PostgreSQL with pgvector that starts ({exc})", "pip install 'nmafc[dev]'")
    socket_dir = server.get_uri().split("host=", 1)[1]
    yield f"postgresql+psycopg://postgres@/postgres?host={socket_dir}"
    server.cleanup()


@pytest.fixture
def pgvector_uri(pgvector_server: str) -> Iterator[str]:
    """A fresh database on the pgvector server, dropped afterwards."""
    name = f"nmafc_{uuid.uuid4().hex[:10]}"
    admin = create_engine(pgvector_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    yield pgvector_server.replace("/postgres?", f"/{name}?")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def _open(tmp_path: Path, cold_uri: str, embedder: Any, **cold: Any) -> MemoryEngine:
    settings = Settings(
        data_dir=tmp_path, extractor="verbatim", cold={"uri": cold_uri, **cold}
    )  # fmt: skip
    return MemoryEngine.open(settings, embedder=embedder)


def _archive_a_marathon(engine: MemoryEngine, scope: Scope) -> str:
    fact = engine.ingest(scope, [FactDraft("Caroline is training for a marathon", "goal")])
    let_turns_pass(engine, scope, 500)
    assert engine.maintain(scope).archived == 1
    assert engine.working_set(scope) == {}
    return fact.added[0].id


def test_archived_facts_are_found_by_meaning_in_the_database_not_in_ram(
    tmp_path: Path, pgvector_uri: str, shared_embedder: Any
) -> None:
    engine = _open(tmp_path, pgvector_uri, shared_embedder)
    try:
        assert engine.ctx.cold.vector_search
        scope = Scope("agent-v", "c1")
        fact_id = _archive_a_marathon(engine, scope)
        # No word of the question is in the fact: only its meaning can find it.
        result = engine.recall(scope, "Which long race is she preparing to run?", RecallOptions())
        hit = next(h for h in result.hits if h.id == fact_id)
        assert hit.breakdown.vector is not None
        assert hit.breakdown.vector > 0.3
        assert hit.breakdown.ranks.get("vector") is not None
        assert "marathon" in result.context
        assert engine.ctx.archive.cache.nbytes() == 0  # no RAM archive was built
        hidden = engine.recall(scope, "long race", RecallOptions(include_archived=False))
        assert "marathon" not in hidden.context
    finally:
        engine.close()


def test_embeddings_written_before_pgvector_was_on_are_backfilled(
    tmp_path: Path, pgvector_uri: str, shared_embedder: Any
) -> None:
    scope = Scope("agent-v", "c2")
    before = _open(tmp_path, pgvector_uri, shared_embedder, vector_search="off")
    try:
        fact_id = _archive_a_marathon(before, scope)
    finally:
        before.close()
    after = _open(tmp_path, pgvector_uri, shared_embedder, vector_search="on")
    try:
        with after.ctx.cold.read() as session:
            assert session.vectors is not None
            nearest = session.facts.nearest_decayed(scope, after.embedder.embed(["running"])[0], 5)
        assert [record.id for record, _ in nearest] == [fact_id]
        with after.ctx.cold.read() as session:
            query = after.embedder.embed(["marathon"])[0]
            assert session.facts.nearest_decayed(Scope("agent-w", "c2"), query, 5) == []
    finally:
        after.close()


def test_every_statement_on_fact_vectors_filters_by_agent(
    tmp_path: Path, pgvector_uri: str, shared_embedder: Any
) -> None:
    engine = _open(tmp_path, pgvector_uri, shared_embedder)
    try:
        assert engine.ctx.cold.vector_search
        assert unscoped_statements(engine, tmp_path, must_touch="fact_vectors") == []
    finally:
        engine.close()


def test_a_purge_removes_the_vectors_with_the_facts(
    tmp_path: Path, pgvector_uri: str, shared_embedder: Any
) -> None:
    engine = _open(tmp_path, pgvector_uri, shared_embedder)
    try:
        scope = Scope("agent-v", "c3")
        _archive_a_marathon(engine, scope)
        engine.purge(scope)
        with engine.ctx.cold.read() as session:
            left = session.conn.execute(text("SELECT count(*) FROM fact_vectors")).scalar_one()
        assert left == 0
    finally:
        engine.close()


def test_without_pgvector_auto_falls_back_to_ram_and_on_refuses_with_the_fix(
    tmp_path: Path, postgres_uri: str, shared_embedder: Any
) -> None:
    with create_engine(postgres_uri.split("?")[0]).connect() as conn:
        has_vector = conn.execute(
            text("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        ).first()
    if has_vector:
        pytest.skip("this PostgreSQL has pgvector; the fallback cannot be shown on it")
    engine = _open(tmp_path, postgres_uri, shared_embedder)
    try:
        assert not engine.ctx.cold.vector_search
    finally:
        engine.close()
    with pytest.raises(ConfigurationError, match="NMAFC_COLD_VECTOR_SEARCH"):
        _open(tmp_path / "on", postgres_uri, shared_embedder, vector_search="on")

"""The same engine on LanceDB-on-S3 (SeaweedFS) with the Cold ROM on PostgreSQL."""

from __future__ import annotations

import uuid

import pytest

from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.settings import Settings

from ..conftest import S3Server
from .helpers import assert_consistent, say


@pytest.mark.s3
@pytest.mark.postgres
def test_remember_recall_rollback_purge_on_s3_and_postgres(
    s3_server: S3Server, postgres_uri: str, shared_embedder: object, tmp_path: object
) -> None:
    settings = Settings(
        data_dir=tmp_path,  # type: ignore[arg-type]
        cold={"uri": postgres_uri},  # type: ignore[arg-type]
        hot={  # type: ignore[arg-type]
            "uri": s3_server.uri(f"hot-{uuid.uuid4().hex[:8]}"),
            "s3_endpoint": s3_server.endpoint,
            "s3_access_key_id": s3_server.access_key,
            "s3_secret_access_key": s3_server.secret_key,
            "s3_allow_http": True,
        },
    )
    scope = Scope("agent-s3", "c1")
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        engine.remember(scope, [say("I keep bees on my roof."), say("The hive produced honey.")])
        result = engine.recall(scope, "What does Caroline keep?", RecallOptions())
        assert "bees" in result.context
        assert result.reinforced > 0
        engine.remember(scope, [say("I sold the hive.")])
        engine.rollback(scope, 2)
        assert_consistent(engine, scope)
    finally:
        engine.close()
    reopened = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        assert_consistent(reopened, scope)
        receipt = reopened.purge(scope)
        assert receipt.cold["turns"] == 3
        assert reopened.ctx.hot.store.count(scope) == 0
    finally:
        reopened.close()

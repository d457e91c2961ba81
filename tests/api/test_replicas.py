"""Two replicas on one PostgreSQL and one LanceDB-on-S3: each scope maintained once, and a
live stream on either sees the writes made through both."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest

from nmafc.services import MaintenanceService

from ..conftest import S3Server
from .conftest import ADMIN, BOOTSTRAP, Running, serve, service_settings
from .test_live import assert_one_app_streams_what_the_other_writes

pytestmark = [pytest.mark.anyio, pytest.mark.postgres, pytest.mark.s3]
EVERY = 3
SCOPES = [f"c{i}" for i in range(6)]
ROUNDS = 3


def _replica(data_dir: Path, cold_uri: str, s3: S3Server, prefix: str) -> Any:
    return service_settings(
        data_dir,
        cold_uri,
        api={"keys": BOOTSTRAP},
        hot={
            "uri": s3.uri(prefix),
            "s3_endpoint": s3.endpoint,
            "s3_access_key_id": s3.access_key,
            "s3_secret_access_key": s3.secret_key,
            "s3_allow_http": True,
        },
        consolidation={"every_turns": EVERY},
        maintenance={"pass_enabled": True, "pass_interval_s": 0.02, "flush_enabled": False,
                     "compaction_enabled": False},
    )  # fmt: skip


def _maintenance(app: Running) -> MaintenanceService:
    service = app.state.services[0]
    assert isinstance(service, MaintenanceService)
    return service


async def test_two_replicas_maintain_each_scope_exactly_once_per_interval(
    tmp_path: Path, postgres_uri: str, s3_server: S3Server, shared_embedder: Any
) -> None:
    prefix = f"replicas-{uuid.uuid4().hex[:8]}"
    one_settings = _replica(tmp_path / "one", postgres_uri, s3_server, prefix)
    two_settings = _replica(tmp_path / "two", postgres_uri, s3_server, prefix)
    async with (
        serve(one_settings, shared_embedder) as one,
        serve(two_settings, shared_embedder) as two,
    ):
        for _ in range(ROUNDS):
            for index, conversation in enumerate(SCOPES):
                app = (one, two)[index % 2]
                writer = app.client(ADMIN, agent_id="agent-r", conversation_id=conversation)
                await writer.add([f"turn {n} of {conversation}" for n in range(EVERY)])
            with anyio.fail_after(60):
                while await anyio.to_thread.run_sync(one.state.engine.due_scopes):
                    await anyio.sleep(0.05)
    # Read once both apps have stopped: a pass is reported after its Hot write, which can
    # still be running when the Cold ROM already says the scope is no longer due.
    passes = [*_maintenance(one).reports, *_maintenance(two).reports]
    per_scope = Counter(report.scope.conversation_id for report in passes)
    assert per_scope == {conversation: ROUNDS for conversation in SCOPES}
    assert len({(r.scope, r.turn) for r in passes}) == len(passes)  # no interval twice
    assert _maintenance(one).reports
    assert _maintenance(two).reports


async def test_a_live_stream_on_one_replica_sees_writes_made_through_the_other(
    tmp_path: Path, postgres_uri: str, s3_server: S3Server, shared_embedder: Any
) -> None:
    prefix = f"replicas-live-{uuid.uuid4().hex[:8]}"
    async with (
        serve(_replica(tmp_path / "one", postgres_uri, s3_server, prefix), shared_embedder) as one,
        serve(_replica(tmp_path / "two", postgres_uri, s3_server, prefix), shared_embedder) as two,
    ):
        await assert_one_app_streams_what_the_other_writes(one, two)
        await assert_one_app_streams_what_the_other_writes(two, one)

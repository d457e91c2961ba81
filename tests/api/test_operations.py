"""Probes, metrics and background services as the running app exposes them."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from .conftest import ADMIN, BOOTSTRAP, Running, serve, service_settings

pytestmark = pytest.mark.anyio


async def test_probes_answer_without_a_key(secured: Running) -> None:
    assert (await secured.http.get("/healthz")).json() == {"status": "ok"}
    ready = await secured.http.get("/readyz")
    assert ready.json() == {"status": "ready", "stores": {"cold": "ok", "hot": "ok"}}


async def test_metrics_count_by_route_template_and_never_name_a_tenant(running: Running) -> None:
    agent, conversation = f"tenant-{uuid.uuid4().hex[:8]}", f"conv-{uuid.uuid4().hex[:8]}"
    nmafc = running.client(agent_id=agent, conversation_id=conversation)
    added = await nmafc.add(["Ingested once.", "Ingested twice."])
    memory_id = added.added[0].id
    await nmafc.get(memory_id)
    await nmafc.search("ingested")
    text = (await running.http.get("/metrics")).text
    assert agent not in text
    assert conversation not in text
    assert memory_id not in text
    assert re.search(
        r'nmafc_http_requests_total\{method="GET",route="/v1/memories/\{memory_id\}",'
        r'status="200"\} 1\.0',
        text,
    )
    assert 'nmafc_ingested_total{kind="messages"} 2.0' in text
    assert 'nmafc_recall_duration_seconds_count{scope="conversation"} 1.0' in text
    assert "nmafc_cold_store_bytes" in text
    assert "nmafc_hot_store_rows" in text
    assert re.search(r"^process_cpu_seconds_total [0-9.e+]+$", text, re.M)
    assert re.search(r"^process_resident_memory_bytes [0-9.e+]+$", text, re.M)
    labels = set(re.findall(r'(\w+)="', text))
    assert labels <= {"method", "route", "status", "kind", "scope", "service", "le"}


async def test_background_services_run_and_are_timed(tmp_path: Path, shared_embedder: Any) -> None:
    settings = service_settings(
        tmp_path,
        api={"keys": BOOTSTRAP},
        consolidation={"every_turns": 2},
        maintenance={"pass_enabled": True, "pass_interval_s": 0.1, "flush_enabled": True,
                     "flush_interval_s": 0.1, "compaction_enabled": False},
    )  # fmt: skip
    async with serve(settings, shared_embedder) as app:
        await app.client(ADMIN, agent_id="a").add(["one", "two", "three"])
        maintenance = app.state.services[0]
        with anyio.fail_after(20):
            while not getattr(maintenance, "reports", None):
                await anyio.sleep(0.05)
        assert not app.state.engine.maintenance_due(maintenance.reports[0].scope)
        metrics = await app.http.get("/metrics", headers={"Authorization": f"Bearer {ADMIN}"})
        assert 'nmafc_background_job_duration_seconds_count{service="maintenance"}' in metrics.text
        assert 'nmafc_background_job_items_total{service="maintenance"} 1.0' in metrics.text


async def test_the_app_turns_the_librarys_inline_maintenance_off(running: Running) -> None:
    assert running.state.settings.consolidation.inline is False

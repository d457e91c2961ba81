"""Tenancy and API keys: bootstrap and stored keys, revocation, modes, cross-agent 404s."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from nmafc.auth import KeyAdmin, parse_bootstrap_keys
from nmafc.core.scope import AgentScope
from nmafc.errors import ConfigurationError, InvalidScope, Unauthorized
from nmafc.settings import Settings
from nmafc.storage.cold.schema import api_keys

from .conftest import ADMIN, KEY_A, KEY_B, Running, serve, service_settings

pytestmark = pytest.mark.anyio


async def test_without_any_key_the_service_is_open_on_loopback(running: Running) -> None:
    response = await running.http.get("/v1/stats", headers={"X-Agent-ID": "a"})
    assert response.status_code == 200


async def test_an_open_service_still_needs_to_be_told_the_agent(running: Running) -> None:
    with pytest.raises(InvalidScope):
        await running.client().stats()


async def test_with_keys_every_route_but_the_probes_needs_a_bearer(secured: Running) -> None:
    for path in ("/v1/memories", "/v1/events", "/v1/graph", "/v1/stats", "/metrics"):
        response = await secured.http.get(path, headers={"X-Agent-ID": "agent-a"})
        assert response.status_code == 401, path
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert response.json()["code"] == "unauthorized"
    for probe in ("/healthz", "/readyz"):
        assert (await secured.http.get(probe)).status_code == 200


async def test_an_unknown_key_is_401(secured: Running) -> None:
    with pytest.raises(Unauthorized):
        await secured.client("not-a-key", agent_id="agent-a").stats()


async def test_an_agent_key_decides_the_agent(secured: Running) -> None:
    a = secured.client(KEY_A)  # no X-Agent-ID: the key's agent
    added = await a.add(["Agent A's private note."])
    assert added.added[0].agent_id == "agent-a"


async def test_an_agent_key_gets_404_and_nothing_else_for_another_agent(secured: Running) -> None:
    b = secured.client(KEY_B)
    b_memory = (await b.add(["Agent B's secret: the vault code is quokka-7."])).added[0]
    a_as_b = {"Authorization": f"Bearer {KEY_A}", "X-Agent-ID": "agent-b"}
    a_own = {"Authorization": f"Bearer {KEY_A}"}
    attempts = [
        ("GET", "/v1/memories", a_as_b, None),
        ("POST", "/v1/memories/search", a_as_b, {"query": "vault code"}),
        ("GET", f"/v1/memories/{b_memory.id}", a_as_b, None),
        ("GET", f"/v1/memories/{b_memory.id}", a_own, None),
        ("GET", f"/v1/memories/{b_memory.id}/history", a_own, None),
        ("PATCH", f"/v1/memories/{b_memory.id}", a_own, {"content": "hijacked"}),
        ("DELETE", f"/v1/memories/{b_memory.id}", a_own, None),
        ("DELETE", "/v1/memories?scope=agent", a_as_b, None),
        ("GET", "/v1/events?scope=agent", a_as_b, None),
        ("GET", "/v1/stats", a_as_b, None),
    ]
    for method, path, headers, body in attempts:
        response = await secured.http.request(method, path, headers=headers, json=body)
        assert response.status_code == 404, (method, path)
        assert "quokka" not in response.text
        assert "vault" not in response.text
    own = await secured.client(KEY_A).search("vault code", scope="agent")
    assert "quokka" not in own.context
    assert (await b.get(b_memory.id)).content.endswith("quokka-7.")


async def test_an_admin_key_acts_for_the_agent_it_names(secured: Running) -> None:
    admin = secured.client(ADMIN, agent_id="agent-b")
    await admin.add(["Written by an operator."])
    assert len((await secured.client(KEY_B).list()).items) == 1
    with pytest.raises(InvalidScope):
        await secured.client(ADMIN).list()  # admin keys must name the agent
    assert (
        await secured.http.get("/metrics", headers={"Authorization": f"Bearer {ADMIN}"})
    ).status_code == 200
    assert (
        await secured.http.get("/metrics", headers={"Authorization": f"Bearer {KEY_A}"})
    ).status_code == 404


async def test_stored_keys_turn_auth_on_and_revocation_turns_them_off(
    tmp_path: Path, shared_embedder: Any
) -> None:
    settings = service_settings(tmp_path, api={"keys_cache_s": 0})
    async with serve(settings, shared_embedder) as app:
        assert (await app.http.get("/v1/stats", headers={"X-Agent-ID": "x"})).status_code == 200
        keys = KeyAdmin(app.state.engine.ctx.cold)
        created = keys.create(agent_id="agent-db", name="test")
        assert (await app.http.get("/v1/stats", headers={"X-Agent-ID": "x"})).status_code == 401
        stored = app.client(created.secret)
        await stored.add(["Stored keys work."])
        assert (await stored.list()).items[0].agent_id == "agent-db"
        keys.revoke(AgentScope("agent-db"), created.row.prefix)
        with pytest.raises(Unauthorized):
            await stored.list()
        with app.state.engine.ctx.cold.read() as session:
            rows = session.conn.execute(select(api_keys)).mappings().all()
        assert created.secret not in str(rows)
        assert rows[0]["key_hash"] != created.secret
        assert rows[0]["revoked_at"] is not None


async def test_auth_off_serves_everyone_and_says_so_loudly(
    tmp_path: Path, shared_embedder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings = service_settings(tmp_path, auth="off", api={"keys": f"{KEY_A}:agent-a"})
    with caplog.at_level(logging.WARNING, logger="nmafc.api"):
        async with serve(settings, shared_embedder) as app:
            response = await app.http.get("/v1/stats", headers={"X-Agent-ID": "agent-b"})
            assert response.status_code == 200
    assert "AUTH IS OFF (NMAFC_AUTH=off)" in caplog.text


async def test_auth_on_without_keys_refuses_every_data_request(
    tmp_path: Path, shared_embedder: Any
) -> None:
    async with serve(service_settings(tmp_path, auth="on"), shared_embedder) as app:
        response = await app.http.get("/v1/stats", headers={"X-Agent-ID": "a"})
        assert response.status_code == 401


async def test_an_open_service_is_refused_beyond_loopback(
    tmp_path: Path, shared_embedder: Any
) -> None:
    settings = service_settings(tmp_path, server={"host": "0.0.0.0"})
    with pytest.raises(ConfigurationError, match="No API key"):
        async with serve(settings, shared_embedder):
            pass


async def test_secrets_never_reach_the_logs(
    secured: Running, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        await secured.client(KEY_A).add(["hello"])
        await secured.client("wrong-secret-value").list() if False else None
        response = await secured.http.get(
            "/v1/stats", headers={"Authorization": "Bearer nope-nope"}
        )
    assert response.status_code == 401
    assert KEY_A not in caplog.text
    assert "nope-nope" not in caplog.text


def test_bootstrap_keys_are_read_from_the_environment_exactly_as_documented(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NMAFC_API_KEYS", "secret1:agent-a,secret2:agent-b,secret3:*")
    monkeypatch.setenv("NMAFC_AUTH", "off")
    settings = Settings()
    assert settings.auth == "off"
    assert settings.api.keys is not None
    keys = parse_bootstrap_keys(settings.api.keys.get_secret_value())
    assert {s: (p.agent_id, p.is_admin) for s, p in keys.items()} == {
        "secret1": ("agent-a", False),
        "secret2": ("agent-b", False),
        "secret3": (None, True),
    }
    assert "secret1" not in settings.model_dump_json()


@pytest.mark.parametrize("bad", ["justasecret", "secret1:", ":agent", "s3cret-x:bad/agent"])
def test_malformed_bootstrap_keys_fail_at_start_up(bad: str) -> None:
    with pytest.raises((ConfigurationError, InvalidScope)):
        parse_bootstrap_keys(bad)

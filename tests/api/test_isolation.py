"""A randomized isolation check: many mixed operations by several agents, over HTTP and
WebSocket, and not one response or live event carries another agent's data."""

from __future__ import annotations

import json
import os
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from httpx_ws import aconnect_ws

from nmafc.auth import KeyAdmin

from .conftest import KEY_A, KEY_B, Running, serve, service_settings

pytestmark = pytest.mark.anyio


@dataclass
class Agent:
    name: str
    key: str
    marker: str
    ids: list[str] = field(default_factory=list)
    seen_live: int = 0


def _leaks(me: Agent, agents: list[Agent], text: str, sent: str = "") -> list[str]:
    """Any trace of another agent in ``text`` (its name, marker or ids) not echoed from
    what the request itself ``sent``."""
    found = []
    for other in agents:
        if other is me:
            continue
        found += [s for s in (other.name, other.marker, *other.ids) if s in text and s not in sent]
    return found


async def _operation(http: httpx.AsyncClient, me: Agent, agents: list[Agent], rng: random.Random
                     ) -> httpx.Response:  # fmt: skip
    auth = {"Authorization": f"Bearer {me.key}", "X-Conversation-ID": rng.choice(["c1", "c2"])}
    other = rng.choice([a for a in agents if a is not me])
    roll = rng.random()
    if roll < 0.22:
        words = f"{me.marker} note {rng.randrange(10**6)}"
        body: dict[str, Any] = (
            {"messages": [{"content": words}]} if rng.random() < 0.5
            else {"facts": [{"content": words, "entity": f"e{rng.randrange(20)}",
                             "related_entities": [f"e{rng.randrange(20)}"]}]}
        )  # fmt: skip
        response = await http.post("/v1/memories", json=body, headers=auth)
        if response.status_code == 201:
            me.ids += [m["id"] for m in response.json()["added"]]
        return response
    if roll < 0.40:
        body = {"query": f"note {other.marker} {me.marker}", "reinforce": rng.random() < 0.5,
                "scope": rng.choice(["conversation", "agent"])}  # fmt: skip
        return await http.post("/v1/memories/search", json=body, headers=auth)
    if roll < 0.50 and other.ids:
        # Someone else's id, with my key: must be 404, whatever the verb.
        target = rng.choice(other.ids)
        method, path, payload = rng.choice(
            [("GET", f"/v1/memories/{target}?scope=agent", None),
             ("GET", f"/v1/memories/{target}/history?scope=agent", None),
             ("PATCH", f"/v1/memories/{target}", {"content": "overwritten"}),
             ("DELETE", f"/v1/memories/{target}", None)]
        )  # fmt: skip
        response = await http.request(method, path, json=payload, headers=auth)
        assert response.status_code == 404, (method, path, response.text)
        return response
    if roll < 0.56:
        # My key, another agent's header: 404 and nothing else.
        path = rng.choice(["/v1/memories", "/v1/events", "/v1/stats", "/v1/graph"])
        response = await http.get(path, headers={**auth, "X-Agent-ID": other.name})
        assert response.status_code == 404, response.text
        return response
    if roll < 0.70:
        path = rng.choice(
            [
                "/v1/memories?scope=agent",
                "/v1/memories?include_invalidated=true",
                "/v1/events?scope=agent",
                "/v1/graph?scope=agent",
                "/v1/stats",
            ]
        )
        return await http.get(path, headers=auth)
    if roll < 0.80 and me.ids:
        target = rng.choice(me.ids)
        if rng.random() < 0.5:
            return await http.get(f"/v1/memories/{target}/history?scope=agent", headers=auth)
        return await http.patch(
            f"/v1/memories/{target}", json={"content": f"{me.marker} edited"}, headers=auth
        )
    if roll < 0.86 and me.ids:
        return await http.delete(f"/v1/memories/{rng.choice(me.ids)}", headers=auth)
    if roll < 0.93:
        return await http.post(
            "/v1/memories/rollback", json={"to_turn": rng.randrange(5)}, headers=auth
        )
    if roll < 0.96:
        return await http.delete("/v1/memories", headers=auth)
    return await http.get("/v1/events", params={"after_id": rng.randrange(50)}, headers=auth)


async def _watch(app: Running, me: Agent, agents: list[Agent], done: anyio.Event) -> None:
    """Read the agent's live stream for the whole run; every event must be its own."""
    async with aconnect_ws("/ws/live", app.http) as ws:
        await ws.send_text(json.dumps({"type": "auth", "token": me.key}))
        assert json.loads(await ws.receive_text())["agent_id"] == me.name
        await ws.send_text(json.dumps({"type": "filter", "backfill": 1000}))
        while not done.is_set():
            with anyio.move_on_after(0.2):
                text = await ws.receive_text()
                message = json.loads(text)
                assert _leaks(me, agents, text) == [], text[:300]
                if message["type"] == "event":
                    assert message["event"]["agent_id"] == me.name
                    me.seen_live += 1


async def run_isolation(app: Running, operations: int, seed: int) -> list[Agent]:
    stored = KeyAdmin(app.state.engine.ctx.cold).create(agent_id="agent-c")
    agents = [
        Agent("agent-a", KEY_A, f"zq{uuid.uuid4().hex[:6]}"),
        Agent("agent-b", KEY_B, f"zq{uuid.uuid4().hex[:6]}"),
        Agent("agent-c", stored.secret, f"zq{uuid.uuid4().hex[:6]}"),
    ]
    rng = random.Random(seed)
    done = anyio.Event()
    statuses: dict[int, int] = {}

    async def worker(n: int) -> None:
        for _ in range(n):
            me = rng.choice(agents)
            response = await _operation(app.http, me, agents, rng)
            statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            assert response.status_code < 500, response.text
            if response.status_code >= 400:  # an error may echo the id it was asked for
                sent = f"{response.request.url} {response.request.content.decode()}"
                assert _leaks(me, agents, response.text, sent) == [], response.text[:300]
            else:  # data: nothing of another agent, except a search's echo of its query
                answer = response.json()
                answer.pop("query", None)
                text = json.dumps(answer)
                assert _leaks(me, agents, text) == [], text[:300]

    async with anyio.create_task_group() as watchers:
        for agent in agents:
            watchers.start_soon(_watch, app, agent, agents, done)
        async with anyio.create_task_group() as workers:
            for _ in range(4):
                workers.start_soon(worker, operations // 4)
        await anyio.sleep(0.5)
        done.set()
    assert statuses.get(404, 0) > operations // 20  # the cross-agent probes really ran
    assert all(agent.seen_live > 0 for agent in agents)
    return agents


async def _isolated_app(tmp_path: Path, embedder: Any) -> Any:
    from .conftest import BOOTSTRAP

    settings = service_settings(tmp_path, api={"keys": BOOTSTRAP}, live={"queue_size": 100_000})
    return serve(settings, embedder)


async def test_mixed_operations_never_cross_agents(tmp_path: Path, shared_embedder: Any) -> None:
    operations = int(os.environ.get("NMAFC_TEST_ISOLATION_OPERATIONS", "1200"))
    async with await _isolated_app(tmp_path, shared_embedder) as app:
        await run_isolation(app, operations, seed=7)


@pytest.mark.slow
async def test_ten_thousand_mixed_operations_never_cross_agents(
    tmp_path: Path, shared_embedder: Any
) -> None:
    async with await _isolated_app(tmp_path, shared_embedder) as app:
        await run_isolation(app, 10_000, seed=11)

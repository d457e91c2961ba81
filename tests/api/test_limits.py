"""Bounded work per request: a deadline answered 503 + Retry-After, a cap per agent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from .conftest import serve, service_settings
from .test_errors import assert_problem

pytestmark = pytest.mark.anyio
A = {"X-Agent-ID": "agent-a", "X-Conversation-ID": "c1"}
B = {"X-Agent-ID": "agent-b", "X-Conversation-ID": "c1"}


def messages(count: int) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": f"Message {i}: I planted {i} tulips in the garden."}
            for i in range(count)
        ]
    }


async def test_work_past_the_deadline_is_503_with_retry_after_and_stores_nothing(
    tmp_path: Path, shared_embedder: Any
) -> None:
    settings = service_settings(tmp_path, server={"request_timeout_s": 1e-6, "retry_after_s": 3})
    async with serve(settings, shared_embedder) as app:
        for path, body in (
            ("/v1/memories", messages(3)),
            ("/v1/memories", {"facts": [{"content": "Alice likes tea."}]}),
            ("/v1/memories/search", {"query": "tulips"}),
            ("/v1/memories/search", {"query": "tulips", "scope": "agent"}),
        ):
            response = await app.http.post(path, json=body, headers=A)
            problem = assert_problem(response, 503, "request_timeout")
            assert response.headers["retry-after"] == "3"
            assert "NMAFC_SERVER_REQUEST_TIMEOUT_S" in problem["fix"]
        page = await app.http.get("/v1/memories", params={"scope": "agent"}, headers=A)
        assert page.json()["items"] == []
        events = await app.http.get("/v1/events", params={"scope": "agent"}, headers=A)
        assert events.json()["items"] == []
        stats = await app.http.get("/v1/stats", headers=A)
        assert_problem(stats, 503, "request_timeout")


async def test_an_agent_over_its_cap_gets_429_while_another_agent_is_served(
    tmp_path: Path, shared_embedder: Any
) -> None:
    settings = service_settings(tmp_path, server={"agent_max_concurrent": 1})
    async with serve(settings, shared_embedder) as app:
        admission = app.state.admission
        write = asyncio.create_task(app.http.post("/v1/memories", json=messages(300), headers=A))
        while admission.in_flight("agent-a") == 0:
            assert not write.done(), (await write).text
            await asyncio.sleep(0.005)
        busy = await app.http.post("/v1/memories/search", json={"query": "tulips"}, headers=A)
        problem = assert_problem(busy, 429, "agent_busy")
        assert busy.headers["retry-after"]
        assert "NMAFC_SERVER_AGENT_MAX_CONCURRENT" in problem["fix"]
        stats = await app.http.get("/v1/stats", params={"scope": "agent"}, headers=A)
        assert_problem(stats, 429, "agent_busy")
        other = await app.http.post("/v1/memories/search", json={"query": "tulips"}, headers=B)
        assert other.status_code == 200, other.text
        assert admission.in_flight("agent-a") == 1, "the write finished too soon to test"
        assert (await write).status_code == 201
        again = await app.http.post("/v1/memories/search", json={"query": "tulips"}, headers=A)
        assert again.status_code == 200
        assert admission.in_flight("agent-a") == 0

"""``/ws/live``: auth, then filter, then backfill and live events, each exactly once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from httpx_ws import AsyncWebSocketSession, WebSocketDisconnect, aconnect_ws

from nmafc.errors import Unauthorized

from .conftest import ADMIN, BOOTSTRAP, KEY_A, KEY_B, Running, serve, service_settings

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def raw(app: Running) -> AsyncIterator[AsyncWebSocketSession]:
    async with aconnect_ws("/ws/live", app.http) as ws:
        yield ws


async def send(ws: AsyncWebSocketSession, message: dict[str, Any]) -> None:
    await ws.send_text(json.dumps(message))


async def receive(ws: AsyncWebSocketSession) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await ws.receive_text(timeout=10))
    return message


async def close_code(ws: AsyncWebSocketSession) -> tuple[int, list[dict[str, Any]]]:
    """Read until the server closes; return its close code and what it said before."""
    said: list[dict[str, Any]] = []
    try:
        while True:
            said.append(await receive(ws))
    except WebSocketDisconnect as closed:
        return closed.code, said


async def test_backfill_then_live_events_of_the_callers_agent(secured: Running) -> None:
    a, b = secured.client(KEY_A), secured.client(KEY_B)
    await a.add(["Before connecting."])
    async with a.live(backfill=50) as stream:
        backlog = [await stream.receive() for _ in range(3)]
        assert [m["type"] for m in backlog] == ["event", "event", "backfilled"]
        assert [m["event"]["kind"] for m in backlog[:2]] == ["turn", "add"]
        await b.add(["Agent B writes something A must never see."])
        await a.add(["After connecting."])
        live = [await stream.receive() for _ in range(2)]
    assert [m["event"]["kind"] for m in live] == ["turn", "add"]
    assert all(m["event"]["agent_id"] == "agent-a" for m in [*backlog[:2], *live])
    assert "never see" not in json.dumps(live)


async def test_an_event_both_backfilled_and_queued_is_sent_once(secured: Running) -> None:
    a = secured.client(KEY_A)
    engine = secured.state.engine
    read_log = engine.events

    def write_then_read(*args: Any, **kwargs: Any) -> Any:
        # Commit while subscribed but before the backlog is read: the events are in both.
        engine.remember(a_scope, [__import__("nmafc").Message("Raced in.")])
        return read_log(*args, **kwargs)

    from nmafc.core.scope import Scope

    a_scope = Scope("agent-a", "default")
    engine.events = write_then_read  # type: ignore[method-assign]
    try:
        async with a.live(backfill=100) as stream:
            first = [await stream.receive() for _ in range(3)]
            assert first[-1] == {"type": "backfilled", "count": 2}
            await a.add(["Afterwards."])
            later = [await stream.receive() for _ in range(2)]
    finally:
        engine.events = read_log  # type: ignore[method-assign]
    ids = [m["event"]["id"] for m in [*first[:2], *later]]
    assert len(ids) == len(set(ids)) == 4
    assert ids == sorted(ids)


async def test_filters_select_kinds_and_one_conversation(secured: Running) -> None:
    a = secured.client(KEY_A)
    async with a.live(events=["add"], conversation_id="wanted", backfill=0) as stream:
        assert await stream.receive() == {"type": "backfilled", "count": 0}
        await a.scoped(conversation_id="other").add(["Elsewhere."])
        await a.scoped(conversation_id="wanted").add(["Here."])
        message = await stream.receive()
    assert message["event"]["kind"] == "add"
    assert message["event"]["conversation_id"] == "wanted"


async def test_an_agent_wide_purge_reaches_every_conversation_filter(secured: Running) -> None:
    a = secured.client(KEY_A, conversation_id="c1")
    await a.add(["To be erased."])
    async with a.live(conversation_id="c1", events=["purge"], backfill=0) as stream:
        await stream.receive()
        await a.purge(scope="agent")
        message = await stream.receive()
    assert message["event"]["kind"] == "purge"
    assert message["event"]["conversation_id"] == "*"


async def test_a_bad_key_is_closed_with_4401(secured: Running) -> None:
    async with raw(secured) as ws:
        await send(ws, {"type": "auth", "token": "wrong"})
        code, said = await close_code(ws)
    assert code == 4401
    assert said[0]["code"] == "unauthorized"
    with pytest.raises(Unauthorized):
        async with secured.client("wrong").live():
            pass


async def test_another_agents_stream_is_4404(secured: Running) -> None:
    async with raw(secured) as ws:
        await send(ws, {"type": "auth", "token": KEY_A, "agent_id": "agent-b"})
        code, _ = await close_code(ws)
    assert code == 4404


async def test_an_admin_key_names_the_agent_it_watches(secured: Running) -> None:
    async with raw(secured) as ws:
        await send(ws, {"type": "auth", "token": ADMIN, "agent_id": "agent-b"})
        assert await receive(ws) == {"type": "auth_success", "agent_id": "agent-b"}


@pytest.mark.parametrize(
    "first",
    [{"type": "filter"}, {"type": "auth", "token": 5}, "not json"],
)
async def test_a_malformed_first_message_is_4400(secured: Running, first: Any) -> None:
    async with raw(secured) as ws:
        await ws.send_text(first if isinstance(first, str) else json.dumps(first))
        code, _ = await close_code(ws)
    assert code == 4400


async def _live_app(tmp_path: Path, embedder: Any, **live: Any) -> Any:
    return serve(service_settings(tmp_path, api={"keys": BOOTSTRAP}, live=live), embedder)


async def test_a_silent_client_is_closed_after_the_handshake_timeout(
    tmp_path: Path, shared_embedder: Any
) -> None:
    async with await _live_app(tmp_path, shared_embedder, handshake_timeout_s=0.3) as app:
        async with raw(app) as ws:
            code, _ = await close_code(ws)
    assert code == 4408


async def test_a_slow_client_is_dropped_and_never_blocks_ingestion(
    tmp_path: Path, shared_embedder: Any
) -> None:
    async with await _live_app(tmp_path, shared_embedder, queue_size=2) as app:
        a = app.client(KEY_A)
        async with raw(app) as ws:
            await send(ws, {"type": "auth", "token": KEY_A})
            await receive(ws)
            await send(ws, {"type": "filter", "backfill": 0})
            assert (await receive(ws))["type"] == "backfilled"
            with anyio.fail_after(10):
                added = await a.add([f"Message {i}." for i in range(6)])  # 7 events at once
            assert len(added.added) == 6
            code, said = await close_code(ws)
        assert code == 1013
        assert said[-1]["type"] == "error"
        assert app.state.hub.dropped_total == 1
        assert app.state.hub.subscribers == 0
        metrics = (
            await app.http.get("/metrics", headers={"Authorization": f"Bearer {ADMIN}"})
        ).text
        assert "nmafc_live_dropped_total 1.0" in metrics
        assert "nmafc_live_connections 0.0" in metrics
        assert len((await a.list()).items) == 6


async def test_a_connection_ends_at_its_lifetime(tmp_path: Path, shared_embedder: Any) -> None:
    async with await _live_app(tmp_path, shared_embedder, max_connection_s=0.5) as app:
        async with raw(app) as ws:
            await send(ws, {"type": "auth", "token": KEY_A})
            await receive(ws)
            await send(ws, {"type": "filter"})
            code, said = await close_code(ws)
    assert code == 1000
    assert said[0] == {"type": "backfilled", "count": 0}


async def assert_one_app_streams_what_the_other_writes(watched: Running, written: Running) -> None:
    """A client streaming from ``watched`` receives a write made through ``written``."""
    watcher = watched.client(KEY_A, conversation_id="shared")
    async with watcher.live(backfill=0) as stream:
        assert (await stream.receive())["type"] == "backfilled"
        await written.client(KEY_A, conversation_id="shared").add(["Said to the other one."])
        with anyio.fail_after(10):
            got = [await stream.receive() for _ in range(2)]
    assert [m["event"]["kind"] for m in got] == ["turn", "add"]
    assert "Said to the other one." in json.dumps(got)


async def test_two_processes_on_one_data_dir_stream_each_others_writes(
    tmp_path: Path, shared_embedder: Any
) -> None:
    """Two workers of ``nmafc serve`` share the embedded stores; each streams both."""
    settings = service_settings(tmp_path, api={"keys": BOOTSTRAP})
    async with serve(settings, shared_embedder) as one, serve(settings, shared_embedder) as two:
        await assert_one_app_streams_what_the_other_writes(one, two)
        await assert_one_app_streams_what_the_other_writes(two, one)

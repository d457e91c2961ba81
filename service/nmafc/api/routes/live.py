"""``/ws/live``: one agent's events as they are committed.

The protocol, in order:

1. the client sends ``{"type": "auth", "token": "<key>"}`` — the key decides the agent
   (an admin key, or an open service, also sends ``"agent_id"``); the server answers
   ``{"type": "auth_success", "agent_id": …}``;
2. the client sends ``{"type": "filter", "events": [...], "conversation_id": …,
   "backfill": n}`` (every field optional);
3. the server subscribes to the hub *first*, then sends up to ``backfill`` recent events
   from the log, then ``{"type": "backfilled", "count": n}``, then live events — an event
   both backfilled and queued is sent once.

Every event arrives as ``{"type": "event", "event": {...}}`` (the ``EventOut`` schema).
Close codes: 4400 malformed message, 4401 bad key, 4404 another agent, 4408 handshake
timeout, 1013 the client fell ``NMAFC_LIVE_QUEUE_SIZE`` events behind (or the process
is full), 1000 the connection reached ``NMAFC_LIVE_MAX_CONNECTION_S``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal, TypeVar

import anyio
from anyio.to_thread import run_sync
from fastapi import APIRouter, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, Field, ValidationError

from nmafc.api.deps import StateDep
from nmafc.api.state import AppState
from nmafc.core.events import Event
from nmafc.core.scope import AgentScope, AnyScope, Scope
from nmafc.errors import InvalidInput, NmafcError, NotFound, Unauthorized
from nmafc.live.hub import DROPPED, LiveFilter, Subscription, TooManySubscribers
from nmafc.wire import ID_PATTERN, EventKindName, EventOut

router = APIRouter(tags=["live"])

BAD_MESSAGE, UNAUTHORIZED, NOT_FOUND, TIMEOUT, OVERLOADED, DONE = 4400, 4401, 4404, 4408, 1013, 1000


class AuthMessage(BaseModel):
    type: Literal["auth"]
    token: str | None = Field(None, max_length=512)
    agent_id: str | None = Field(None, pattern=ID_PATTERN)


class FilterMessage(BaseModel):
    type: Literal["filter"]
    events: list[EventKindName] | None = None
    conversation_id: str | None = Field(None, pattern=ID_PATTERN)
    backfill: int | None = Field(None, ge=0, le=1000)


M = TypeVar("M", bound=BaseModel)
GONE = (WebSocketDisconnect, RuntimeError, OSError)  # what sending to a departed peer raises


class Close(Exception):
    def __init__(self, code: int, error: NmafcError) -> None:
        super().__init__(error.detail)
        self.code = code
        self.error = error


@router.websocket("/ws/live")
async def live(websocket: WebSocket, state: StateDep) -> None:
    """Stream the caller's agent's events: auth, then filter, then backfill and live."""
    await websocket.accept()
    try:
        with anyio.fail_after(state.settings.live.handshake_timeout_s):
            agent_id = await _authenticate(websocket, state)
            wanted = await _receive(websocket, FilterMessage)
    except TimeoutError:
        await _close(websocket, TIMEOUT, InvalidInput("No auth/filter message in time."))
        return
    except Close as close:
        await _close(websocket, close.code, close.error)
        return
    except WebSocketDisconnect:
        return
    live_filter = LiveFilter(frozenset(wanted.events or ()), wanted.conversation_id)
    backfill = state.settings.live.backfill if wanted.backfill is None else wanted.backfill
    try:
        sub = state.hub.subscribe(agent_id, live_filter)
    except TooManySubscribers:
        await _close(websocket, OVERLOADED, InvalidInput("Too many live connections."))
        return
    try:
        outcome = await _stream(websocket, state, sub, backfill)
    finally:
        state.hub.unsubscribe(sub)
    if outcome == "dropped":
        await _close(websocket, OVERLOADED, InvalidInput("The client fell too far behind."))
    elif outcome == "expired":
        await _close(websocket, DONE, InvalidInput("The connection reached its lifetime."))


async def _authenticate(websocket: WebSocket, state: AppState) -> str:
    message = await _receive(websocket, AuthMessage)
    try:
        principal = await run_sync(state.auth.authenticate, message.token)
        agent_id = principal.agent(message.agent_id)
    except Unauthorized as exc:
        raise Close(UNAUTHORIZED, exc) from exc
    except NotFound as exc:
        raise Close(NOT_FOUND, exc) from exc
    except NmafcError as exc:
        raise Close(BAD_MESSAGE, exc) from exc
    await websocket.send_json({"type": "auth_success", "agent_id": agent_id})
    return agent_id


async def _receive(websocket: WebSocket, model: type[M]) -> M:
    text = await websocket.receive_text()
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        raise Close(BAD_MESSAGE, InvalidInput(f"{where}: {first['msg']}")) from exc


async def _stream(websocket: WebSocket, state: AppState, sub: Subscription, backfill: int) -> str:
    """Backfill, then live events, until the client leaves, lags or the lifetime ends."""
    outcome = "left"
    async with anyio.create_task_group() as group:
        sub.on_drop = group.cancel_scope.cancel
        group.start_soon(_until_client_leaves, websocket, group.cancel_scope)
        with anyio.move_on_after(state.settings.live.max_connection_s) as lifetime:
            try:
                await _send_events(websocket, state, sub, backfill)
            except GONE:
                outcome = "left"
        if lifetime.cancelled_caught:
            outcome = "expired"
        group.cancel_scope.cancel()
    return "dropped" if sub.dropped else outcome


async def _send_events(
    websocket: WebSocket, state: AppState, sub: Subscription, backfill: int
) -> None:
    reach: AnyScope = (
        Scope(sub.agent_id, sub.filter.conversation_id)
        if sub.filter.conversation_id
        else AgentScope(sub.agent_id)
    )
    recent: list[Event] = []
    if backfill:
        recent = await run_sync(
            partial(state.engine.events, reach, limit=backfill, kinds=sorted(sub.filter.kinds))
        )
    sent = {event.id for event in recent}
    for event in recent:
        await websocket.send_json(_event(event))
    await websocket.send_json({"type": "backfilled", "count": len(recent)})
    while True:
        item = await sub.queue.get()
        if item == DROPPED:
            return
        assert isinstance(item, Event)
        if item.id in sent:
            continue  # committed between subscribing and reading the backlog
        await websocket.send_json(_event(item))


async def _until_client_leaves(websocket: WebSocket, scope: anyio.CancelScope) -> None:
    """Read (and ignore) client messages; a disconnect ends the stream."""
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                break
    except GONE:
        pass
    scope.cancel()


def _event(event: Event) -> dict[str, Any]:
    return {"type": "event", "event": EventOut.of(event).model_dump(mode="json")}


async def _close(websocket: WebSocket, code: int, error: NmafcError) -> None:
    """Say why (an ``error`` message), then close with ``code``; give up if the peer is gone."""
    with anyio.move_on_after(2):
        try:
            await websocket.send_json(
                {"type": "error", "code": error.code, "detail": error.detail, "fix": error.fix}
            )
            await websocket.close(code, reason=error.detail[:120])
        except GONE:
            pass

"""A thin HTTP client for the NMAFC service: ``Client`` (blocking) and ``AsyncClient``.

::

    from nmafc.client import Client

    with Client("http://127.0.0.1:8000", api_key="…", agent_id="support-bot") as nmafc:
        nmafc.add(messages=[{"role": "user", "content": "I'm allergic to shellfish."}])
        print(nmafc.search("what can't I eat?").context)

Errors come back as the same typed exceptions the library raises (``MemoryNotFound``,
``Unauthorized``, ``StoreUnavailable`` …), rebuilt from the problem+json ``code``; each
carries ``status``, ``detail``, ``fix`` and the server's ``request_id``. Pass
``transport=`` (e.g. ``httpx.ASGITransport(app)``) to talk to an app in-process.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeVar

import httpx
from pydantic import BaseModel

from nmafc import errors
from nmafc.wire import (
    AddResult,
    EventOut,
    EventPage,
    GraphOut,
    Memory,
    MemoryHistory,
    MemoryPage,
    PurgeReceiptOut,
    Ready,
    RollbackOut,
    ScopesOut,
    SearchResult,
    StatsOut,
)
from nmafc.wire import headers as names

M = TypeVar("M", bound=BaseModel)
Reach = Literal["conversation", "agent"]
MessageLike = str | Mapping[str, Any]
FactLike = str | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _Call:
    """One request, built once and sent by either client."""

    method: str
    path: str
    model: type[BaseModel] | None
    params: dict[str, Any] = field(default_factory=dict)
    body: dict[str, Any] | None = None


def _drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _message(item: MessageLike) -> dict[str, Any]:
    return {"role": "user", "content": item} if isinstance(item, str) else dict(item)


def _fact(item: FactLike) -> dict[str, Any]:
    return {"content": item} if isinstance(item, str) else dict(item)


class _Calls:
    """Request builders shared by :class:`Client` and :class:`AsyncClient`."""

    @staticmethod
    def add(messages: Sequence[MessageLike] | None, facts: Sequence[FactLike] | None) -> _Call:
        body = _drop_none(
            {
                "messages": None if messages is None else [_message(m) for m in messages],
                "facts": None if facts is None else [_fact(f) for f in facts],
            }
        )
        return _Call("POST", "/v1/memories", AddResult, body=body)

    @staticmethod
    def search(query: str, options: Mapping[str, Any]) -> _Call:
        body = _drop_none({"query": query, **options})
        if isinstance(body.get("as_of"), datetime):
            body["as_of"] = body["as_of"].isoformat()
        return _Call("POST", "/v1/memories/search", SearchResult, body=body)

    @staticmethod
    def list(params: Mapping[str, Any]) -> _Call:
        return _Call("GET", "/v1/memories", MemoryPage, params=_drop_none(params))

    @staticmethod
    def get(memory_id: str, scope: Reach) -> _Call:
        return _Call("GET", f"/v1/memories/{memory_id}", Memory, params={"scope": scope})

    @staticmethod
    def update(memory_id: str, body: Mapping[str, Any]) -> _Call:
        return _Call("PATCH", f"/v1/memories/{memory_id}", Memory, body=_drop_none(body))

    @staticmethod
    def forget(memory_id: str) -> _Call:
        return _Call("DELETE", f"/v1/memories/{memory_id}", Memory)

    @staticmethod
    def history(memory_id: str, scope: Reach) -> _Call:
        path = f"/v1/memories/{memory_id}/history"
        return _Call("GET", path, MemoryHistory, params={"scope": scope})

    @staticmethod
    def rollback(to_turn: float) -> _Call:
        return _Call("POST", "/v1/memories/rollback", RollbackOut, body={"to_turn": to_turn})

    @staticmethod
    def purge(scope: Reach) -> _Call:
        return _Call("DELETE", "/v1/memories", PurgeReceiptOut, params={"scope": scope})

    @staticmethod
    def events(params: Mapping[str, Any]) -> _Call:
        return _Call("GET", "/v1/events", EventPage, params=_drop_none(params))

    @staticmethod
    def graph(scope: Reach, max_nodes: int) -> _Call:
        params = {"scope": scope, "max_nodes": max_nodes}
        return _Call("GET", "/v1/graph", GraphOut, params=params)

    @staticmethod
    def stats(scope: Reach) -> _Call:
        return _Call("GET", "/v1/stats", StatsOut, params={"scope": scope})

    @staticmethod
    def scopes(limit: int) -> _Call:
        return _Call("GET", "/v1/scopes", ScopesOut, params={"limit": limit})


def raise_for_problem(response: httpx.Response) -> None:
    """Raise the typed NMAFC error a problem+json response describes."""
    if response.is_success:
        return
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    cls = errors.by_code(str(body.get("code", "")))
    error = cls(
        str(body.get("detail") or f"HTTP {response.status_code}"),
        fix=body.get("fix"),
    )
    error.status = response.status_code  # type: ignore[misc]
    error.request_id = body.get("request_id")  # type: ignore[attr-defined]
    error.retry_after = response.headers.get("Retry-After")  # type: ignore[attr-defined]
    raise error


class _Base:
    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None,
        agent_id: str | None,
        conversation_id: str | None,
    ) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.agent_id = agent_id
        self.conversation_id = conversation_id

    def _headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.api_key:
            headers[names.AUTHORIZATION] = f"Bearer {self.api_key}"
        if self.agent_id:
            headers[names.AGENT] = self.agent_id
        if self.conversation_id:
            headers[names.CONVERSATION] = self.conversation_id
        return headers

    def _request(self, call: _Call) -> dict[str, Any]:
        request: dict[str, Any] = {"headers": self._headers()}
        if call.params:
            request["params"] = call.params
        if call.body is not None:
            request["json"] = call.body
        return request


class Client(_Base):
    """Blocking client bound to one agent (and conversation); share it across threads."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        api_key: str | None = None,
        agent_id: str | None = None,
        conversation_id: str | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        http: httpx.Client | None = None,
    ) -> None:
        super().__init__(
            base_url, api_key=api_key, agent_id=agent_id, conversation_id=conversation_id
        )
        self._owns_http = http is None
        self.http = http or httpx.Client(base_url=base_url, timeout=timeout, transport=transport)

    def scoped(self, *, agent_id: str | None = None, conversation_id: str | None = None) -> Client:
        """A view on another agent or conversation sharing this connection pool."""
        return Client(
            self.base_url,
            api_key=self.api_key,
            agent_id=agent_id or self.agent_id,
            conversation_id=conversation_id or self.conversation_id,
            http=self.http,
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        if self._owns_http:
            self.http.close()

    def _send(self, call: _Call) -> Any:
        response = self.http.request(call.method, call.path, **self._request(call))
        raise_for_problem(response)
        return call.model.model_validate_json(response.content) if call.model else response

    def add(
        self,
        messages: Sequence[MessageLike] | None = None,
        *,
        facts: Sequence[FactLike] | None = None,
    ) -> AddResult:
        """Remember messages (facts are extracted), or store explicit facts."""
        result: AddResult = self._send(_Calls.add(messages, facts))
        return result

    def search(self, query: str, **options: Any) -> SearchResult:
        """Recall for ``query`` (options: top_k, budget_tokens, as_of, scope, reinforce …)."""
        result: SearchResult = self._send(_Calls.search(query, options))
        return result

    def list(self, **params: Any) -> MemoryPage:
        """One page of memories (params: cursor, limit, tier, entity, scope …)."""
        result: MemoryPage = self._send(_Calls.list(params))
        return result

    def iter_memories(self, **params: Any) -> Iterator[Memory]:
        """Every memory, following the cursor."""
        cursor: str | None = None
        while True:
            page = self.list(**params, cursor=cursor)
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def get(self, memory_id: str, *, scope: Reach = "conversation") -> Memory:
        result: Memory = self._send(_Calls.get(memory_id, scope))
        return result

    def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        tier: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        body = {"content": content, "tier": tier, "expected_version": expected_version}
        result: Memory = self._send(_Calls.update(memory_id, body))
        return result

    def forget(self, memory_id: str) -> Memory:
        result: Memory = self._send(_Calls.forget(memory_id))
        return result

    def history(self, memory_id: str, *, scope: Reach = "conversation") -> MemoryHistory:
        result: MemoryHistory = self._send(_Calls.history(memory_id, scope))
        return result

    def rollback(self, to_turn: float) -> RollbackOut:
        result: RollbackOut = self._send(_Calls.rollback(to_turn))
        return result

    def purge(self, *, scope: Reach = "conversation") -> PurgeReceiptOut:
        result: PurgeReceiptOut = self._send(_Calls.purge(scope))
        return result

    def events(self, **params: Any) -> EventPage:
        result: EventPage = self._send(_Calls.events(params))
        return result

    def graph(self, *, scope: Reach = "conversation", max_nodes: int = 500) -> GraphOut:
        result: GraphOut = self._send(_Calls.graph(scope, max_nodes))
        return result

    def stats(self, *, scope: Reach = "conversation") -> StatsOut:
        result: StatsOut = self._send(_Calls.stats(scope))
        return result

    def scopes(self, *, limit: int = 500) -> ScopesOut:
        """The agents and conversations this key may open (every agent for admin keys)."""
        result: ScopesOut = self._send(_Calls.scopes(limit))
        return result

    def ready(self) -> Ready:
        result: Ready = self._send(_Call("GET", "/readyz", Ready))
        return result


class AsyncClient(_Base):
    """The asyncio twin of :class:`Client`, plus :meth:`live` for ``/ws/live``."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        api_key: str | None = None,
        agent_id: str | None = None,
        conversation_id: str | None = None,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            base_url, api_key=api_key, agent_id=agent_id, conversation_id=conversation_id
        )
        self._owns_http = http is None
        self.http = http or httpx.AsyncClient(
            base_url=base_url, timeout=timeout, transport=transport
        )

    def scoped(
        self, *, agent_id: str | None = None, conversation_id: str | None = None
    ) -> AsyncClient:
        """A view on another agent or conversation sharing this connection pool."""
        return AsyncClient(
            self.base_url,
            api_key=self.api_key,
            agent_id=agent_id or self.agent_id,
            conversation_id=conversation_id or self.conversation_id,
            http=self.http,
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self.http.aclose()

    async def _send(self, call: _Call) -> Any:
        response = await self.http.request(call.method, call.path, **self._request(call))
        raise_for_problem(response)
        return call.model.model_validate_json(response.content) if call.model else response

    async def add(
        self,
        messages: Sequence[MessageLike] | None = None,
        *,
        facts: Sequence[FactLike] | None = None,
    ) -> AddResult:
        """Remember messages (facts are extracted), or store explicit facts."""
        result: AddResult = await self._send(_Calls.add(messages, facts))
        return result

    async def search(self, query: str, **options: Any) -> SearchResult:
        result: SearchResult = await self._send(_Calls.search(query, options))
        return result

    async def list(self, **params: Any) -> MemoryPage:
        result: MemoryPage = await self._send(_Calls.list(params))
        return result

    async def iter_memories(self, **params: Any) -> AsyncIterator[Memory]:
        cursor: str | None = None
        while True:
            page = await self.list(**params, cursor=cursor)
            for item in page.items:
                yield item
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def get(self, memory_id: str, *, scope: Reach = "conversation") -> Memory:
        result: Memory = await self._send(_Calls.get(memory_id, scope))
        return result

    async def update(
        self,
        memory_id: str,
        *,
        content: str | None = None,
        tier: str | None = None,
        expected_version: int | None = None,
    ) -> Memory:
        body = {"content": content, "tier": tier, "expected_version": expected_version}
        result: Memory = await self._send(_Calls.update(memory_id, body))
        return result

    async def forget(self, memory_id: str) -> Memory:
        result: Memory = await self._send(_Calls.forget(memory_id))
        return result

    async def history(self, memory_id: str, *, scope: Reach = "conversation") -> MemoryHistory:
        result: MemoryHistory = await self._send(_Calls.history(memory_id, scope))
        return result

    async def rollback(self, to_turn: float) -> RollbackOut:
        result: RollbackOut = await self._send(_Calls.rollback(to_turn))
        return result

    async def purge(self, *, scope: Reach = "conversation") -> PurgeReceiptOut:
        result: PurgeReceiptOut = await self._send(_Calls.purge(scope))
        return result

    async def events(self, **params: Any) -> EventPage:
        result: EventPage = await self._send(_Calls.events(params))
        return result

    async def graph(self, *, scope: Reach = "conversation", max_nodes: int = 500) -> GraphOut:
        result: GraphOut = await self._send(_Calls.graph(scope, max_nodes))
        return result

    async def stats(self, *, scope: Reach = "conversation") -> StatsOut:
        result: StatsOut = await self._send(_Calls.stats(scope))
        return result

    async def scopes(self, *, limit: int = 500) -> ScopesOut:
        result: ScopesOut = await self._send(_Calls.scopes(limit))
        return result

    async def ready(self) -> Ready:
        result: Ready = await self._send(_Call("GET", "/readyz", Ready))
        return result

    @asynccontextmanager
    async def live(
        self,
        *,
        events: Sequence[str] | None = None,
        conversation_id: str | None = None,
        backfill: int | None = None,
    ) -> AsyncIterator[LiveStream]:
        """Open ``/ws/live``: authenticate, send the filter, then read with ``receive()``."""
        from httpx_ws import aconnect_ws

        refused: dict[str, Any] | None = None
        ws: Any
        try:
            async with aconnect_ws("/ws/live", self.http) as ws:
                auth = {"type": "auth", "token": self.api_key, "agent_id": self.agent_id}
                await ws.send_text(json.dumps(_drop_none(auth)))
                stream = LiveStream(ws)
                reply = await stream.receive()
                if reply.get("type") != "auth_success":
                    refused = reply
                else:
                    wanted = {
                        "events": events,
                        "conversation_id": conversation_id,
                        "backfill": backfill,
                    }
                    await ws.send_text(json.dumps({"type": "filter", **_drop_none(wanted)}))
                    yield stream
        except BaseExceptionGroup as group:
            # httpx-ws runs the session in a task group: surface a lone error as itself.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        if refused is not None:
            raise _live_error(refused)


class LiveStream:
    """The messages of one ``/ws/live`` connection."""

    def __init__(self, ws: Any) -> None:
        self._ws = ws

    async def receive(self, timeout: float | None = None) -> dict[str, Any]:
        """The next message (``event``, ``backfilled`` or ``error``)."""
        message: dict[str, Any] = json.loads(await self._ws.receive_text(timeout=timeout))
        return message

    async def events(self, timeout: float | None = None) -> AsyncIterator[EventOut]:
        """Events until the server closes (``backfilled`` markers are skipped)."""
        while True:
            message = await self.receive(timeout)
            if message["type"] == "event":
                yield EventOut.model_validate(message["event"])
            elif message["type"] == "error":
                raise _live_error(message)


def _live_error(message: Mapping[str, Any]) -> errors.NmafcError:
    cls = errors.by_code(str(message.get("code", "")))
    return cls(str(message.get("detail", "live connection refused")), fix=message.get("fix"))

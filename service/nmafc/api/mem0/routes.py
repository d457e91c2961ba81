"""The Mem0 Platform routes the unchanged ``mem0ai`` SDK calls (``MemoryClient(host=...)``).

They sit beside NMAFC's own ``/v1/memories`` routes and differ from them by the trailing
slash (``/v1/memories/{id}/``, ``DELETE /v1/memories/``) or the ``/v3`` prefix; they take
``Authorization: Token <key>`` (or ``Bearer``) and are left out of the OpenAPI document.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any
from uuid import UUID

import anyio.to_thread
from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import JSONResponse

from nmafc.api.deps import StateDep
from nmafc.api.mem0.mapping import (
    ENTITIES,
    Target,
    agent_for,
    conversation_of,
    history_json,
    memory_json,
    parse_filters,
    refuse,
)
from nmafc.auth import Principal
from nmafc.doors.backend import EngineBackend
from nmafc.errors import InvalidInput, UnsupportedParameter
from nmafc.wire import FactIn, Memory, MessageIn, PatchMemory, Reach, SearchRequest

router = APIRouter(include_in_schema=False)
_SCHEME = re.compile(r"^\s*(token|bearer)\s+(\S+)\s*$", re.IGNORECASE)
MAX_LISTED = 10_000  # get_all reads at most this many memories per selection


async def mem0_principal(
    state: StateDep, authorization: Annotated[str | None, Header()] = None
) -> Principal:
    """The caller, from ``Authorization: Token <key>`` (Mem0's scheme) or ``Bearer``."""
    match = _SCHEME.match(authorization or "")
    token = match.group(2) if match else None
    known = state.auth.known(token)
    if known is not None:
        return known
    return await anyio.to_thread.run_sync(state.auth.authenticate, token)


Mem0Principal = Annotated[Principal, Depends(mem0_principal)]


def _backend(state: StateDep, agent: str) -> EngineBackend:
    return EngineBackend(
        state.engine, state.settings, agent, recall_runner=state.recall_threads.run
    )


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError as exc:
        raise InvalidInput("The body is not JSON.", fix="Send a JSON object.") from exc
    if not isinstance(body, dict):
        raise InvalidInput("The body must be a JSON object.", fix="Send a JSON object.")
    return body


def _agent_named(request: Request, body_agent: Any = None) -> Any:
    return body_agent or request.query_params.get("agent_id") or request.headers.get("x-agent-id")


@router.get("/v1/ping/")
async def ping(principal: Mem0Principal) -> dict[str, Any]:
    """Mem0's key check: who the key is."""
    return {
        "status": "ok",
        "message": "NMAFC (Mem0-compatible API)",
        "user_email": None,
        # The SDK requires both; one NMAFC deployment is one org, each agent a project.
        "org_id": "nmafc",
        "project_id": principal.agent_id or "admin",
        "agent_id": principal.agent_id,
    }


@router.post("/v3/memories/add/")
async def add(request: Request, principal: Mem0Principal, state: StateDep) -> dict[str, Any]:
    """Remember messages for a user/run (``infer: false`` stores them verbatim)."""
    body = await _body(request)
    refuse(body, ["messages", "filters", "infer", "timestamp", *ENTITIES], "add")
    named, targets = parse_filters(body.get("filters"), "add")
    entities = {k: body.get(k) for k in ENTITIES}
    if any(entities.values()):
        if body.get("filters") is not None:
            raise InvalidInput(
                "Entity ids are given both at the top level and in `filters`.",
                fix="Pass them in one place.",
            )
        named = entities["agent_id"]
        targets = [Target(conversation_of(entities["user_id"], entities["run_id"]))]
    if len(targets) != 1:
        raise UnsupportedParameter(
            "`OR` filters cannot name where to add.", fix="Add to one user_id / run_id."
        )
    backend = _backend(state, agent_for(principal, _agent_named(request, named)))
    conversation = targets[0].conversation or conversation_of(None, None)
    messages = _messages(body.get("messages"), body.get("timestamp"))
    if body.get("infer", True) is False:  # stored verbatim, one memory per message
        facts = [FactIn.model_validate({"content": m.content}) for m in messages]
        written = await backend.ingest(conversation, facts)
    else:
        written = await backend.add(conversation, messages)
    results = [_event(m, "ADD") for m in written.added]
    results += [_event(m, "DELETE") for m in written.invalidated]  # superseded
    return {"results": results}


def _event(m: Memory, event: str) -> dict[str, Any]:
    return {"id": m.id, "memory": m.content, "event": event, "data": {"memory": m.content}}


def _messages(raw: Any, timestamp: Any) -> list[MessageIn]:
    if isinstance(raw, str):
        raw = [{"role": "user", "content": raw}]
    if not isinstance(raw, list) or not raw:
        raise InvalidInput(
            "`messages` must be a non-empty list.", fix='Send [{"role": "user", "content": …}].'
        )
    when = None
    if timestamp is not None:
        if not isinstance(timestamp, int | float) or isinstance(timestamp, bool):
            raise InvalidInput("`timestamp` must be Unix seconds.", fix="Send an integer.")
        when = datetime.fromtimestamp(timestamp, UTC).isoformat()
    out = []
    for item in raw:
        if not isinstance(item, dict):
            raise InvalidInput("Each message must be an object.", fix="Send role and content.")
        refuse(item, ["role", "content", "name"], "a message")
        fields = {"role": item.get("role", "user"), "content": item.get("content")}
        if item.get("name"):
            fields["speaker"] = item["name"]
        if when is not None:
            fields["timestamp"] = when
        out.append(MessageIn.model_validate(fields))
    return out


@router.post("/v3/memories/search/")
async def search(request: Request, principal: Mem0Principal, state: StateDep) -> dict[str, Any]:
    """Search by meaning over the users/runs the filters name (``AND`` / ``OR``)."""
    body = await _body(request)
    _drop_false(body, "rerank", "keyword_search", "show_expired")
    refuse(body, ["query", "filters", "top_k", "latest_only"], "search")
    named, targets = parse_filters(body.get("filters"), "search")
    backend = _backend(state, agent_for(principal, _agent_named(request, named)))
    top_k = body.get("top_k") or 10
    if not isinstance(top_k, int) or not 1 <= top_k <= 100:
        raise InvalidInput("`top_k` must be an integer from 1 to 100.")
    query = SearchRequest.model_validate(
        {
            "query": body.get("query"),
            "top_k": top_k,
            "include_invalidated": body.get("latest_only", True) is False,
        }
    )
    scored: dict[str, dict[str, Any]] = {}
    for target in targets:
        scope = "agent" if target.conversation is None else "conversation"
        found = await backend.search(
            target.conversation or "default", query.model_copy(update={"scope": scope})
        )
        for hit in found.hits:
            if hit.memory is not None and hit.id not in scored:
                scored[hit.id] = memory_json(hit.memory, hit.score)
    ranked = sorted(scored.values(), key=lambda m: -float(m["score"]))
    return {"results": ranked[:top_k]}


def _drop_false(body: dict[str, Any], *names: str) -> None:
    """Flags whose ``false`` is NMAFC's behaviour anyway; ``true`` stays to be refused."""
    for name in names:
        if body.get(name) is False:
            del body[name]


@router.post("/v3/memories/")
async def get_all(request: Request, principal: Mem0Principal, state: StateDep) -> dict[str, Any]:
    """Every memory of the users/runs the filters name, a page at a time."""
    body = await _body(request)
    _drop_false(body, "show_expired")
    refuse(body, ["filters", "latest_only"], "get_all")
    refuse(dict(request.query_params), ["page", "page_size", "agent_id"], "get_all")
    page = _positive(request.query_params.get("page", "1"), "page")
    size = _positive(request.query_params.get("page_size", "100"), "page_size")
    named, targets = parse_filters(body.get("filters"), "get_all")
    backend = _backend(state, agent_for(principal, _agent_named(request, named)))
    every: dict[str, Memory] = {}
    for target in targets:
        for memory in await _all(backend, target, body.get("latest_only", True) is False):
            every.setdefault(memory.id, memory)
    items = list(every.values())
    start = (page - 1) * size
    base = str(request.url.remove_query_params(["page", "page_size"]))
    more = start + size < len(items)
    return {
        "count": len(items),
        "next": f"{base}?page={page + 1}&page_size={size}" if more else None,
        "previous": f"{base}?page={page - 1}&page_size={size}" if page > 1 else None,
        "results": [memory_json(m) for m in items[start : start + size]],
    }


async def _all(backend: EngineBackend, target: Target, invalidated: bool) -> list[Memory]:
    scope: Reach = "agent" if target.conversation is None else "conversation"
    found: list[Memory] = []
    cursor: str | None = None
    while len(found) < MAX_LISTED:
        page = await backend.list(
            target.conversation or "default",
            scope=scope,
            cursor=cursor,
            limit=500,
            include_invalidated=invalidated,
        )
        found += page.items
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    return found


def _positive(value: str, name: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise InvalidInput(f"`{name}` must be a positive integer.")
    return int(value)


async def _located(backend: EngineBackend, memory_id: str) -> Memory:
    """The memory, wherever it is in the agent (Mem0 ids carry no user)."""
    return await backend.get("default", memory_id, "agent")


@router.get("/v1/memories/{memory_id:uuid}/")
async def get(
    memory_id: UUID, request: Request, principal: Mem0Principal, state: StateDep
) -> dict[str, Any]:
    """One memory by id."""
    refuse(dict(request.query_params), ["agent_id"], "get")
    backend = _backend(state, agent_for(principal, _agent_named(request)))
    return memory_json(await _located(backend, str(memory_id)))


@router.put("/v1/memories/{memory_id:uuid}/")
async def update(
    memory_id: UUID, request: Request, principal: Mem0Principal, state: StateDep
) -> dict[str, Any]:
    """New text for a memory (a new version; the old one stays in its history)."""
    body = await _body(request)
    if "expiration_date" in body and body["expiration_date"] is None:
        del body["expiration_date"]  # "clear the expiry": NMAFC memories have none
    refuse(body, ["text"], "update")
    refuse(dict(request.query_params), ["agent_id"], "update")
    if body.get("text") is None:
        raise InvalidInput("Send `text`.", fix="update(memory_id, text='…')")
    backend = _backend(state, agent_for(principal, _agent_named(request)))
    found = await _located(backend, str(memory_id))
    patch = PatchMemory.model_validate({"content": body["text"]})
    return memory_json(await backend.update(found.conversation_id, found.id, patch))


@router.delete("/v1/memories/{memory_id:uuid}/")
async def delete(
    memory_id: UUID, request: Request, principal: Mem0Principal, state: StateDep
) -> dict[str, Any]:
    """Forget a memory: no longer recalled, its history kept."""
    params = dict(request.query_params)
    if params.get("delete_linked") in ("false", "False"):
        del params["delete_linked"]
    refuse(params, ["agent_id"], "delete")
    backend = _backend(state, agent_for(principal, _agent_named(request)))
    found = await _located(backend, str(memory_id))
    await backend.forget(found.conversation_id, found.id)
    return {"message": "Memory deleted successfully!"}


@router.delete("/v1/memories/")
async def delete_all(request: Request, principal: Mem0Principal, state: StateDep) -> JSONResponse:
    """Erase a user's/run's memories (or, by agent_id alone, the agent's) from every store."""
    params = dict(request.query_params)
    refuse(params, ENTITIES, "delete_all")
    if not any(params.get(k) for k in ENTITIES):
        raise InvalidInput(
            "delete_all needs user_id, run_id or agent_id.",
            fix="Name what to erase, e.g. delete_all(user_id='alice').",
        )
    backend = _backend(state, agent_for(principal, _agent_named(request, params.get("agent_id"))))
    if params.get("user_id") or params.get("run_id"):
        conversation = conversation_of(params.get("user_id"), params.get("run_id"))
        receipt = await backend.purge(conversation, "conversation")
    else:
        receipt = await backend.purge("default", "agent")
    return JSONResponse(
        {"message": "Memories deleted successfully!", "receipt": receipt.model_dump(mode="json")}
    )


@router.get("/v1/memories/{memory_id:uuid}/history/")
async def history(
    memory_id: UUID, request: Request, principal: Mem0Principal, state: StateDep
) -> list[dict[str, Any]]:
    """A memory's versions as Mem0 history entries (ADD, UPDATE, DELETE)."""
    refuse(dict(request.query_params), ["agent_id"], "history")
    backend = _backend(state, agent_for(principal, _agent_named(request)))
    found = await _located(backend, str(memory_id))
    return history_json(await backend.history(found.conversation_id, found.id, "agent"))

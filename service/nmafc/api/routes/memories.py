"""``/v1/memories``: add, search, list, read, edit, forget, history, rollback, purge."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Annotated
from uuid import UUID

from anyio.to_thread import run_sync
from fastapi import APIRouter, Depends, Path, Query, Response

from nmafc.api import converters
from nmafc.api.bodies import CheckedBodyRoute
from nmafc.api.converters import search_result_json
from nmafc.api.deps import (
    EngineDep,
    ReachQuery,
    StateDep,
    TenantDep,
    strict_query,
)
from nmafc.api.errors import problem_responses
from nmafc.core.scope import AnyScope
from nmafc.engine.recall import RecallOptions, RecallResult
from nmafc.wire import (
    CURSOR_PATTERN,
    AddMemories,
    AddMessages,
    AddResult,
    Memory,
    MemoryHistory,
    MemoryPage,
    PatchMemory,
    PurgeReceiptOut,
    QueryFlag,
    RollbackOut,
    RollbackRequest,
    SearchRequest,
    SearchResult,
    Text,
    TierName,
)

router = APIRouter(
    prefix="/v1/memories",
    tags=["memories"],
    responses=problem_responses(400, 401, 404, 413, 415, 422, 429, 503),
    dependencies=[Depends(strict_query)],
    route_class=CheckedBodyRoute,
)
# Ids are UUIDs: the path convertor keeps /search and /rollback from reading as ids.
MemoryId = Annotated[UUID, Path(description="A memory's id.")]


@router.post("", status_code=201, response_model=AddResult)
async def add_memories(body: AddMemories, tenant: TenantDep, state: StateDep) -> AddResult:
    """Remember conversation messages (facts are extracted) or store explicit facts."""
    engine, metrics = state.engine, state.metrics
    started = time.perf_counter()
    with state.admission.heavy(tenant.agent_id):
        if isinstance(body, AddMessages):
            kind, count = "messages", len(body.messages)
            messages = [m.to_message() for m in body.messages]
            result = await run_sync(engine.remember, tenant.scope, messages)
        else:
            kind, count = "facts", len(body.facts)
            drafts = [f.to_draft() for f in body.facts]
            result = await run_sync(engine.ingest, tenant.scope, drafts)
    metrics.ingested.labels(kind).inc(count)
    metrics.ingest_seconds.labels(kind).observe(time.perf_counter() - started)
    return converters.add_result(result)


@router.post("/search", response_model=SearchResult)
async def search_memories(
    body: SearchRequest,
    tenant: TenantDep,
    state: StateDep,
) -> Response:
    """Recall a dated, token-budgeted context and ranked hits for a query."""
    engine, metrics = state.engine, state.metrics
    options = RecallOptions(
        budget_tokens=body.budget_tokens or state.settings.retrieval.budget_tokens,
        as_of=body.as_of if isinstance(body.as_of, float) else None,
        as_of_time=None if isinstance(body.as_of, float) else body.as_of,
        include_invalidated=body.include_invalidated,
        include_archived=body.include_archived,
        reinforce=body.reinforce,
        top_k=body.top_k or state.settings.retrieval.top_k,
    )
    started = time.perf_counter()
    recall = partial(_recall_json, engine.recall, tenant.reach(body.scope), body.query, options)
    with state.admission.heavy(tenant.agent_id):
        hits, payload = await state.recall_threads.run(recall)  # FIFO, bounded
    metrics.recalls.labels(body.scope).inc()
    metrics.recall_seconds.labels(body.scope).observe(time.perf_counter() - started)
    metrics.recall_hits.observe(hits)
    return Response(payload, media_type="application/json")


def _recall_json(
    recall: Callable[[AnyScope, str, RecallOptions], RecallResult],
    reach: AnyScope,
    query: str,
    options: RecallOptions,
) -> tuple[int, bytes]:
    """Recall and its response body, built in the worker thread.

    A result carries dozens of hits with their records; building and serialising those
    models on the event loop made the loop the bottleneck of concurrent searches. The
    body is a ``SearchResult`` (the route's declared model), serialised without building it.
    """
    result = recall(reach, query, options)
    return len(result.hits), search_result_json(result)


@router.get("", response_model=MemoryPage)
async def list_memories(
    tenant: TenantDep,
    engine: EngineDep,
    scope: ReachQuery = "conversation",
    cursor: Annotated[
        str | None, Query(pattern=CURSOR_PATTERN, description="`next_cursor` of a page.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    tier: TierName | None = None,
    entity: Annotated[Text | None, Query(max_length=200)] = None,
    include_invalidated: Annotated[
        QueryFlag, Query(description="Also list superseded and forgotten memories.")
    ] = False,
) -> MemoryPage:
    """List memories oldest first, a page at a time; filter by tier, entity, validity."""
    page = await run_sync(
        partial(
            engine.page,
            tenant.reach(scope),
            after=int(cursor or 0),
            limit=limit,
            tier=tier,
            entity=entity,
            include_invalidated=include_invalidated,
        )
    )
    return converters.memory_page(page)


@router.get("/{memory_id:uuid}", response_model=Memory)
async def get_memory(
    memory_id: MemoryId, tenant: TenantDep, engine: EngineDep, scope: ReachQuery = "conversation"
) -> Memory:
    """Read one memory at its latest version (valid or not)."""
    return Memory.of(await run_sync(engine.get, tenant.reach(scope), str(memory_id)))


@router.patch("/{memory_id:uuid}", response_model=Memory, responses=problem_responses(409))
async def update_memory(
    memory_id: MemoryId, body: PatchMemory, tenant: TenantDep, engine: EngineDep
) -> Memory:
    """Edit a memory: new content is a new version; a tier change is in place; both logged."""
    updated = await run_sync(
        partial(
            engine.update,
            tenant.scope,
            str(memory_id),
            content=body.content,
            tier=body.tier,
            expected_version=body.expected_version,
        )
    )
    return Memory.of(updated)


@router.delete("/{memory_id:uuid}", response_model=Memory)
async def forget_memory(memory_id: MemoryId, tenant: TenantDep, engine: EngineDep) -> Memory:
    """Forget a memory: it stops being recalled; its history is kept (purge erases)."""
    return Memory.of(await run_sync(engine.forget, tenant.scope, str(memory_id)))


@router.get("/{memory_id:uuid}/history", response_model=MemoryHistory)
async def memory_history(
    memory_id: MemoryId, tenant: TenantDep, engine: EngineDep, scope: ReachQuery = "conversation"
) -> MemoryHistory:
    """Every version of a memory and every event that touched it."""
    return converters.memory_history(
        await run_sync(engine.history, tenant.reach(scope), str(memory_id))
    )


@router.post("/rollback", response_model=RollbackOut)
async def rollback(body: RollbackRequest, tenant: TenantDep, engine: EngineDep) -> RollbackOut:
    """Return the conversation's memory to its state at a turn (logged, never rewritten)."""
    return converters.rollback_out(await run_sync(engine.rollback, tenant.scope, body.to_turn))


@router.delete("", response_model=PurgeReceiptOut)
async def purge(
    tenant: TenantDep, engine: EngineDep, scope: ReachQuery = "conversation"
) -> PurgeReceiptOut:
    """Erase the conversation (or the whole agent) from every store; returns a receipt."""
    return converters.purge_receipt_out(await run_sync(engine.purge, tenant.reach(scope)))

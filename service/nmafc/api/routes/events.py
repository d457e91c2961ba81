"""``/v1/events``, ``/v1/graph``, ``/v1/stats``: what happened, how it links, how much."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from anyio.to_thread import run_sync
from fastapi import APIRouter, Depends, Query

from nmafc.api import converters
from nmafc.api.bodies import CheckedBodyRoute
from nmafc.api.deps import EngineDep, ReachQuery, StateDep, TenantDep, strict_query
from nmafc.api.errors import problem_responses
from nmafc.wire import EventKindName, EventOut, EventPage, GraphOut, StatsOut

router = APIRouter(
    prefix="/v1",
    tags=["events"],
    responses=problem_responses(401, 404, 422, 429, 503),
    dependencies=[Depends(strict_query)],
    route_class=CheckedBodyRoute,
)


@router.get("/events", response_model=EventPage)
async def list_events(
    tenant: TenantDep,
    engine: EngineDep,
    scope: ReachQuery = "conversation",
    after_id: Annotated[int, Query(ge=0, le=2**62, description="Events after this id.")] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    kinds: Annotated[list[EventKindName] | None, Query(max_length=13)] = None,
) -> EventPage:
    """The event log, oldest first after `after_id` (default: the newest `limit`)."""
    events = await run_sync(
        partial(
            engine.events, tenant.reach(scope), after_id=after_id, limit=limit, kinds=kinds or ()
        )
    )
    return EventPage(
        items=[EventOut.of(e) for e in events],
        next_after_id=events[-1].id if events else after_id,
    )


@router.get("/graph", response_model=GraphOut)
async def entity_graph(
    tenant: TenantDep,
    engine: EngineDep,
    scope: ReachQuery = "conversation",
    max_nodes: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> GraphOut:
    """The entity graph: entities with their records, and the links between them."""
    graph = await run_sync(partial(engine.graph, tenant.reach(scope), max_nodes=max_nodes))
    return GraphOut.of(graph)


@router.get("/stats", response_model=StatsOut)
async def stats(tenant: TenantDep, state: StateDep, scope: ReachQuery = "conversation") -> StatsOut:
    """Counts per tier, invalidations, turns, events, Hot rows, weights and decay constants."""
    with state.admission.heavy(tenant.agent_id):
        found = await run_sync(state.engine.stats, tenant.reach(scope))
    return converters.stats_out(found, state.settings.decay)

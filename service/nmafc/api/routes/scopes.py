"""``/v1/scopes``: the agents and conversations the caller may open (the scope picker)."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from anyio.to_thread import run_sync
from fastapi import APIRouter, Depends, Query

from nmafc.api import converters
from nmafc.api.bodies import CheckedBodyRoute
from nmafc.api.deps import PrincipalDep, StateDep, strict_query
from nmafc.api.errors import problem_responses
from nmafc.wire import ScopesOut

router = APIRouter(
    prefix="/v1",
    tags=["scopes"],
    responses=problem_responses(401, 422, 503),
    dependencies=[Depends(strict_query)],
    route_class=CheckedBodyRoute,
)


@router.get("/scopes", response_model=ScopesOut)
async def list_scopes(
    principal: PrincipalDep,
    state: StateDep,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
) -> ScopesOut:
    """The conversations of the key's agent (of every agent for an admin key), oldest first."""
    bound = None if principal.is_admin else principal.agent(None)
    agents = None if bound is None else [bound]
    listing = partial(state.engine.conversations, agents, limit)
    found, truncated = await run_sync(listing)
    return converters.scopes_out(bound, found, truncated)

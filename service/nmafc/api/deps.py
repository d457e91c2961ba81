"""``Annotated`` dependencies: the lifespan state, the engine, and who is calling for whom."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, cast

import anyio.to_thread
from fastapi import Depends, Header, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import HTTPConnection

from nmafc.api.metrics import Metrics
from nmafc.api.state import AppState
from nmafc.auth import Principal
from nmafc.core.scope import AgentScope, AnyScope, Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import AgentNotReachable, InvalidInput
from nmafc.settings import Settings
from nmafc.wire import ID_PATTERN, Reach
from nmafc.wire import headers as names

DEFAULT_CONVERSATION = "default"

# Dependencies without I/O are ``async def``: FastAPI would run a plain ``def`` in its
# thread pool, a hand-off per dependency per request for a few attribute reads.


async def get_state(conn: HTTPConnection) -> AppState:
    return cast(AppState, conn.state.nmafc)


StateDep = Annotated[AppState, Depends(get_state)]


async def get_engine(state: StateDep) -> MemoryEngine:
    return state.engine


async def get_settings(state: StateDep) -> Settings:
    return state.settings


async def get_metrics(state: StateDep) -> Metrics:
    return state.metrics


EngineDep = Annotated[MemoryEngine, Depends(get_engine)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
MetricsDep = Annotated[Metrics, Depends(get_metrics)]

bearer = HTTPBearer(
    auto_error=False,
    description="An API key from NMAFC_API_KEYS or `nmafc keys create`. Not needed while "
    "no key exists (NMAFC_AUTH=auto) or with NMAFC_AUTH=off.",
)


async def get_principal(
    state: StateDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    token = credentials.credentials if credentials is not None else None
    known = state.auth.known(token)
    if known is not None:
        return known
    return await anyio.to_thread.run_sync(state.auth.authenticate, token)


PrincipalDep = Annotated[Principal, Depends(get_principal)]


@dataclass(frozen=True, slots=True)
class Tenant:
    """The agent and conversation a request acts on, already authorised."""

    agent_id: str
    conversation_id: str
    principal: Principal

    @property
    def scope(self) -> Scope:
        return Scope(self.agent_id, self.conversation_id)

    @property
    def agent(self) -> AgentScope:
        return AgentScope(self.agent_id)

    def reach(self, which: Reach) -> AnyScope:
        """This conversation, or every conversation of the agent (never another agent)."""
        return self.agent if which == "agent" else self.scope


async def get_tenant(
    principal: PrincipalDep,
    agent_id: Annotated[
        str | None,
        Header(
            alias=names.AGENT,
            pattern=ID_PATTERN,
            description="The agent; optional with an agent-bound key (it decides).",
        ),
    ] = None,
    conversation_id: Annotated[
        str | None,
        Header(
            alias=names.CONVERSATION,
            pattern=ID_PATTERN,
            description=f"The conversation; default `{DEFAULT_CONVERSATION}`.",
        ),
    ] = None,
) -> Tenant:
    return Tenant(principal.agent(agent_id), conversation_id or DEFAULT_CONVERSATION, principal)


TenantDep = Annotated[Tenant, Depends(get_tenant)]


async def require_admin(principal: PrincipalDep) -> Principal:
    """Operator routes (``/metrics``): an admin key, or an open service."""
    if not principal.is_admin:
        raise AgentNotReachable("This route is for admin keys.")
    return principal


AdminDep = Annotated[Principal, Depends(require_admin)]


async def strict_query(request: Request) -> None:
    """Refuse query parameters the route does not declare (as bodies refuse unknown fields)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    known = _query_names(route.dependant)
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        raise InvalidInput(
            f"Unknown query parameter {unknown[0]!r}.",
            fix=f"Use only: {', '.join(sorted(known)) or 'none'} (see /docs).",
        )


def _query_names(dependant: Dependant) -> set[str]:
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


ReachQuery = Annotated[
    Reach, Query(description="`conversation` (X-Conversation-ID) or every conversation.")
]

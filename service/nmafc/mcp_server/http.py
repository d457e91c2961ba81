"""``/mcp``: the MCP tools over Streamable HTTP, on the service's own port and keys.

Stateless, JSON responses: every POST carries its own ``Authorization`` header, which
decides the agent exactly as for the REST routes (an agent-bound key acts for its agent
only, an admin key or an open service names one with ``X-Agent-ID``). A request without a
valid key is refused with the REST API's 401 problem before the MCP SDK sees it.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

from anyio.to_thread import run_sync
from mcp.server.context import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from nmafc.api.errors import error_response
from nmafc.api.state import AppState
from nmafc.auth import Principal
from nmafc.core.scope import validate_id
from nmafc.doors.backend import EngineBackend
from nmafc.errors import InternalError, NmafcError
from nmafc.mcp_server.server import Caller, build_server
from nmafc.mcp_server.tools import DEFAULT_CONVERSATION

CALLER_KEY = "nmafc.mcp.caller"
_BEARER = re.compile(r"^\s*bearer\s+(\S+)\s*$", re.IGNORECASE)


async def _from_request(ctx: ServerRequestContext[Any, Any]) -> Caller:
    """The caller the ASGI wrapper authenticated for this HTTP request.

    An admin key that names no agent may still initialize and list the tools; each call
    then fails with the REST API's ``invalid_scope`` error and its fix.
    """
    request = ctx.request
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict) or CALLER_KEY not in scope:
        raise InternalError("The MCP request reached the tools unauthenticated.")
    found = scope[CALLER_KEY]
    if isinstance(found, NmafcError):
        raise found
    return cast(Caller, found)


class McpHttpApp:
    """The ASGI app at ``/mcp``: authenticate like REST, then hand over to the SDK."""

    path_format = "/mcp"  # the route label of its requests in /metrics and the access log

    def __init__(self) -> None:
        self.server = build_server(_from_request)
        self.manager = StreamableHTTPSessionManager(
            app=self.server, stateless=True, json_response=True
        )

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """The SDK's task group, for the app's lifespan."""
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        state = cast(AppState, scope["state"]["nmafc"])
        try:
            caller = await self._caller(state, scope)
        except NmafcError as exc:
            response = error_response(exc, scope.get("path", "/mcp"))
            await response(scope, receive, send)
            return
        scope[CALLER_KEY] = caller
        scope.setdefault("route", self)
        await self.manager.handle_request(scope, receive, send)

    async def _caller(self, state: AppState, scope: Scope) -> Caller | NmafcError:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        match = _BEARER.match(headers.get("authorization", ""))
        token = match.group(1) if match else None
        principal: Principal | None = state.auth.known(token)
        if principal is None:
            principal = await run_sync(state.auth.authenticate, token)
        named = headers.get("x-agent-id") or None
        if principal.is_admin and named is None:
            try:
                principal.agent(None)
            except NmafcError as exc:
                return exc
        agent = principal.agent(named)  # another agent's name on an agent key: 404, as REST
        conversation = headers.get("x-conversation-id") or DEFAULT_CONVERSATION
        validate_id(conversation, "conversation_id")
        backend = EngineBackend(
            state.engine, state.settings, agent, recall_runner=state.recall_threads.run
        )
        return backend, conversation

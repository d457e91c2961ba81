"""The MCP SDK's low-level server, with NMAFC's tools, over any way of finding the caller."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext

from nmafc import __version__
from nmafc.doors.backend import MemoryBackend
from nmafc.errors import NmafcError
from nmafc.mcp_server.tools import call_tool, error_result, list_tools

# The caller of one request: the backend of the agent its key decided, and the
# conversation its tools act on when they name none.
Caller = tuple[MemoryBackend, str]
Resolver = Callable[[ServerRequestContext[Any, Any]], Awaitable[Caller]]

INSTRUCTIONS = """Long-term memory for this agent. Call search_memories before answering \
anything that may depend on what the user said earlier; call add_memory with what the user \
tells you about themselves, their plans and preferences. Memories are dated and a newer fact \
supersedes an older one, so prefer adding the correction to deleting the old fact."""


def build_server(resolve: Resolver) -> Server[Any]:
    """A server whose tools act for whoever ``resolve`` finds behind each request."""

    async def on_list_tools(
        _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list_tools())

    async def on_call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            backend, conversation = await resolve(ctx)
        except NmafcError as exc:
            return error_result(exc)
        return await call_tool(backend, params.name, params.arguments, conversation)

    return Server(
        "nmafc",
        version=__version__,
        title="NMAFC memory",
        instructions=INSTRUCTIONS,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )

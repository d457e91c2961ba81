"""``nmafc mcp``: the memory tools over stdio, for desktop MCP clients.

Embedded by default (the local stores, as ``nmafc serve`` would open them; one agent,
``--agent``), or a proxy to a running service (``--url`` and ``--api-key``: the key decides
the agent there, ``--agent`` names one for an admin key). Stdout carries the protocol and
nothing else: logs go to stderr.
"""

from __future__ import annotations

import logging
import sys
from functools import partial
from typing import Any

import anyio
from anyio.to_thread import run_sync
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from nmafc.core.scope import validate_id
from nmafc.doors.backend import ClientBackend, EngineBackend, MemoryBackend
from nmafc.mcp_server.server import Caller, build_server
from nmafc.settings import Settings

log = logging.getLogger("nmafc.mcp")


async def serve_backend(backend: MemoryBackend, conversation: str) -> None:
    """Serve ``backend`` over this process's stdin/stdout until the client hangs up."""

    async def resolve(_ctx: ServerRequestContext[Any, Any]) -> Caller:
        return backend, conversation

    server = build_server(resolve)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def _embedded(settings: Settings, agent_id: str, conversation: str) -> None:
    from nmafc.engine.engine import MemoryEngine

    engine = await run_sync(partial(MemoryEngine.open, settings))
    try:
        log.info("nmafc mcp: agent %s over %s", agent_id, settings.resolved_cold_uri())
        await serve_backend(EngineBackend(engine, settings, agent_id), conversation)
    finally:
        await run_sync(engine.close)


async def _proxied(url: str, api_key: str | None, agent_id: str | None, conversation: str) -> None:
    from nmafc.client import AsyncClient

    async with AsyncClient(url, api_key=api_key, agent_id=agent_id, timeout=60) as client:
        log.info("nmafc mcp: proxying to %s", url)
        await serve_backend(ClientBackend(client, agent_id or "(the key's agent)"), conversation)


def run_stdio(
    settings: Settings,
    *,
    agent_id: str | None,
    conversation_id: str,
    url: str | None = None,
    api_key: str | None = None,
) -> int:
    """Run ``nmafc mcp`` until stdin closes."""
    logging.basicConfig(
        stream=sys.stderr,
        level=settings.server.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    validate_id(conversation_id, "conversation_id")
    if url is None:
        anyio.run(
            _embedded, settings, validate_id(agent_id or "default", "agent_id"), conversation_id
        )
    else:
        named = validate_id(agent_id, "agent_id") if agent_id else None
        anyio.run(_proxied, url.rstrip("/"), api_key, named, conversation_id)
    return 0

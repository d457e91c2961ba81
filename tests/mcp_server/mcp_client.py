"""The MCP SDK's own client, over Streamable HTTP with a key, and reading its results."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@asynccontextmanager
async def mcp_http(
    url: str, key: str | None, headers: dict[str, str] | None = None
) -> AsyncIterator[Client]:
    """A connected client; ``key`` goes in ``Authorization: Bearer``."""
    sent = dict(headers or {})
    if key is not None:
        sent["Authorization"] = f"Bearer {key}"
    async with httpx2.AsyncClient(headers=sent, timeout=60) as http:
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            yield client


def payload(result: types.CallToolResult) -> Any:
    """A successful tool result's JSON (the text block and the structured copy agree)."""
    assert not result.is_error, result.content
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    body = json.loads(text.text)
    assert body == result.structured_content
    return body


def tool_error(result: types.CallToolResult) -> dict[str, str]:
    """A tool error's ``{"code", "detail", "fix"}``."""
    assert result.is_error, result.content
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    error: dict[str, str] = json.loads(text.text)["error"]
    assert error["fix"], error
    return error

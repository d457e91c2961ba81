"""``nmafc mcp`` over stdio, spawned by the MCP SDK's own stdio client (embedded and --url)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters

from nmafc.testing.processes import NmafcProcess
from tests.mcp_server.conftest import service_env
from tests.mcp_server.mcp_client import payload, tool_error

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[2]


def nmafc_mcp(data_dir: Path, *args: str) -> StdioServerParameters:
    """``nmafc mcp ARGS`` as a desktop client would start it, over ``data_dir``."""
    env = {**service_env(data_dir), "NMAFC_CACHE_DIR": os.environ["NMAFC_CACHE_DIR"]}
    env.pop("NMAFC_API_KEYS")
    return StdioServerParameters(
        command=sys.executable, args=["-m", "nmafc.cli.main", "mcp", *args], env=env
    )


async def test_embedded_stdio_serves_every_tool_over_the_local_stores(tmp_path: Path) -> None:
    server = nmafc_mcp(tmp_path / "data", "--agent", "desk")
    async with Client(server) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert len(names) == 8
        added = payload(await client.call_tool("add_memory", {"text": "I work at Acme."}))
        memory = added["added"][0]
        assert (memory["agent_id"], memory["conversation_id"]) == ("desk", "default")
        found = payload(await client.call_tool("search_memories", {"query": "my employer?"}))
        assert "Acme" in found["context"]
        ident = {"memory_id": memory["id"]}
        assert payload(await client.call_tool("get_memory", ident))["id"] == memory["id"]
        assert payload(await client.call_tool("list_memories", {}))["items"]
        payload(await client.call_tool("update_memory", {**ident, "tier": "EphemeralState"}))
        assert payload(await client.call_tool("memory_history", ident))["events"]
        assert payload(await client.call_tool("delete_memory", ident))["valid"] is False
        receipt = payload(await client.call_tool("delete_all_memories", {"scope": "agent"}))
        assert receipt["scope"] == "desk/*"
        assert tool_error(await client.call_tool("search_memories", {}))["code"] == (
            "invalid_input"
        )


async def test_stdio_proxies_to_a_running_service_with_the_key_deciding_the_agent(
    tmp_path: Path, served: NmafcProcess
) -> None:
    server = nmafc_mcp(tmp_path / "local", "--url", served.url, "--api-key", "alice-key")
    async with Client(server) as client:
        added = payload(
            await client.call_tool(
                "add_memory", {"text": "My dentist is Dr Oliveira.", "conversation_id": "stdio"}
            )
        )
        assert added["added"][0]["agent_id"] == "agent-a"
        missing = tool_error(
            await client.call_tool(
                "get_memory", {"memory_id": "00000000-0000-4000-8000-000000000000"}
            )
        )
        assert missing["code"] == "memory_not_found"
    rest = {"Authorization": "Bearer alice-key", "X-Conversation-ID": "stdio"}
    found = httpx.post(
        f"{served.url}/v1/memories/search", json={"query": "dentist"}, headers=rest, timeout=60
    ).json()
    assert "Oliveira" in found["context"]
    other = {"Authorization": "Bearer bob-key", "X-Conversation-ID": "stdio"}
    theirs = httpx.post(
        f"{served.url}/v1/memories/search", json={"query": "dentist"}, headers=other, timeout=60
    ).json()
    assert "Oliveira" not in theirs["context"]


def readme_stdio_config() -> dict[str, Any]:
    """The desktop-client config the README gives, ``{"command": "nmafc", "args": [...]}``."""
    section = (ROOT / "README.md").read_text().split("## Other doors", 1)[1]
    found = re.search(r'`(\{"command": "nmafc".*?\})`', section)
    assert found, "README.md lacks the stdio config"
    config: dict[str, Any] = json.loads(found.group(1))
    return config


def test_the_readme_stdio_config_speaks_only_protocol_on_stdout(tmp_path: Path) -> None:
    config = readme_stdio_config()
    assert config == {"command": "nmafc", "args": ["mcp"]}
    params = nmafc_mcp(tmp_path / "data")
    # The console script, as a desktop client would find it on PATH.
    params.command = str(Path(sys.executable).with_name(config["command"]))
    params.args = config["args"]
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"text": "I like tea."}},
        },
    ]
    process = subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(params.env or {})},
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write("".join(json.dumps(m) + "\n" for m in messages))
    process.stdin.flush()
    answers = []
    while len(answers) < 3:
        line = process.stdout.readline()
        assert line, "nmafc mcp closed stdout early"
        answers.append(json.loads(line))  # every stdout line is a JSON-RPC message
    process.stdin.close()  # the client hangs up: the server ends
    rest = process.stdout.read()
    errors = process.stderr.read() if process.stderr else ""
    assert process.wait(timeout=120) == 0
    assert rest.strip() == ""
    assert [a.get("id") for a in answers] == [1, 2, 3]
    assert all(a["jsonrpc"] == "2.0" for a in answers)
    assert answers[2]["result"]["isError"] is False
    assert "nmafc mcp: agent default" in errors  # the log went to stderr

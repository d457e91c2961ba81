"""``/mcp`` on a real ``nmafc serve``, driven by the MCP SDK's own Streamable HTTP client."""

from __future__ import annotations

import json
import random
import uuid
from typing import Any

import anyio
import httpx
import pytest

from nmafc.testing.processes import NmafcProcess
from tests.mcp_server.mcp_client import mcp_http, payload, tool_error

pytestmark = pytest.mark.anyio

TOOLS = {
    "add_memory",
    "search_memories",
    "get_memory",
    "list_memories",
    "update_memory",
    "delete_memory",
    "delete_all_memories",
    "memory_history",
}


def conversation() -> str:
    return f"c-{uuid.uuid4().hex[:10]}"


async def test_lists_the_eight_tools_each_with_a_description_and_a_schema(
    served: NmafcProcess,
) -> None:
    async with mcp_http(served.url, "alice-key") as client:
        listed = (await client.list_tools()).tools
    assert {t.name for t in listed} == TOOLS
    for tool in listed:
        assert len(tool.description or "") > 40, tool.name
        assert tool.input_schema["type"] == "object"
        assert "agent_id" not in tool.input_schema["properties"], tool.name
    by_name = {t.name: t for t in listed}
    assert by_name["search_memories"].input_schema["required"] == ["query"]
    assert by_name["get_memory"].input_schema["required"] == ["memory_id"]
    assert by_name["delete_all_memories"].annotations.destructive_hint  # type: ignore[union-attr]


async def test_every_tool_works_end_to_end(served: NmafcProcess) -> None:
    conv = conversation()
    async with mcp_http(served.url, "alice-key") as client:
        added = payload(
            await client.call_tool(
                "add_memory",
                {
                    "text": "I moved to Lisbon last week.",
                    "timestamp": "2024-05-08T10:00:00Z",
                    "conversation_id": conv,
                },
            )
        )
        assert added["added"], added
        memory = added["added"][0]
        assert memory["agent_id"] == "agent-a"
        assert memory["conversation_id"] == conv
        found = payload(
            await client.call_tool(
                "search_memories", {"query": "Where do I live?", "conversation_id": conv}
            )
        )
        assert "Lisbon" in found["context"]
        assert "May 2024" in found["context"]  # dated from the message's timestamp
        assert memory["id"] in [h["memory"]["id"] for h in found["hits"]]
        assert all(isinstance(h["score"], float) for h in found["hits"])
        ident = {"memory_id": memory["id"], "conversation_id": conv}
        assert (
            payload(await client.call_tool("get_memory", ident))["content"] == (memory["content"])
        )
        page = payload(await client.call_tool("list_memories", {"conversation_id": conv}))
        assert [m["id"] for m in page["items"]] == [memory["id"]]
        updated = payload(
            await client.call_tool("update_memory", {**ident, "content": "User lives in Porto."})
        )
        assert updated["version"] == 2
        assert updated["content"] == "User lives in Porto."
        history = payload(await client.call_tool("memory_history", ident))
        assert [v["version"] for v in history["versions"]] == [1, 2]
        forgotten = payload(await client.call_tool("delete_memory", ident))
        assert forgotten["valid"] is False
        receipt = payload(await client.call_tool("delete_all_memories", {"conversation_id": conv}))
        assert receipt["scope"] == f"agent-a/{conv}"
        assert receipt["cold"]["facts"] >= 1
        gone = tool_error(await client.call_tool("get_memory", ident))
        assert gone["code"] == "memory_not_found"


async def test_a_fact_added_through_mcp_is_found_through_rest_and_back(
    served: NmafcProcess,
) -> None:
    conv = conversation()
    rest = {"Authorization": "Bearer alice-key", "X-Conversation-ID": conv}
    # The X-Conversation-ID header picks the conversation when the tool names none.
    async with mcp_http(served.url, "alice-key", {"X-Conversation-ID": conv}) as client:
        payload(await client.call_tool("add_memory", {"text": "My cat is called Miso."}))
        found = httpx.post(
            f"{served.url}/v1/memories/search",
            json={"query": "what is my cat called?"},
            headers=rest,
            timeout=60,
        ).json()
        assert "Miso" in found["context"]
        said = {"messages": [{"content": "My favourite colour is teal."}]}
        added = httpx.post(f"{served.url}/v1/memories", json=said, headers=rest, timeout=60)
        assert added.status_code == 201, added.text
        recalled = payload(
            await client.call_tool("search_memories", {"query": "favourite colour?"})
        )
        assert "teal" in recalled["context"]


async def test_bad_arguments_come_back_as_tool_errors_with_a_fix(served: NmafcProcess) -> None:
    bad = [
        ("search_memories", {}),
        ("search_memories", {"query": 42}),
        ("search_memories", {"query": "x", "scope": "everything"}),
        ("add_memory", {}),
        ("add_memory", {"text": "a", "messages": [{"content": "b"}]}),
        ("add_memory", {"text": "hi", "timestamp": "yesterday-ish"}),
        ("add_memory", {"text": "hi", "conversation_id": "no spaces allowed"}),
        ("get_memory", {"memory_id": "not-a-uuid"}),
        ("update_memory", {"memory_id": str(uuid.uuid4())}),
        ("list_memories", {"limit": 0}),
        ("list_memories", {"agent_id": "agent-b"}),
        ("no_such_tool", {}),
    ]
    async with mcp_http(served.url, "alice-key") as client:
        for name, arguments in bad:
            error = tool_error(await client.call_tool(name, arguments))
            assert error["code"] == "invalid_input", (name, arguments, error)
        missing = tool_error(await client.call_tool("get_memory", {"memory_id": str(uuid.uuid4())}))
        assert missing["code"] == "memory_not_found"
    assert httpx.get(f"{served.url}/readyz").status_code == 200


async def test_without_a_valid_key_mcp_answers_401_before_any_tool_runs(
    served: NmafcProcess,
) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer wrong-key"}):
        answer = httpx.post(f"{served.url}/mcp", json=call, headers=headers)
        assert answer.status_code == 401
        assert answer.json()["code"] == "unauthorized"
        assert answer.json()["fix"]


async def test_an_agent_key_naming_another_agent_is_refused_and_an_admin_key_names_one(
    served: NmafcProcess,
) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    refused = httpx.post(
        f"{served.url}/mcp",
        json=call,
        headers={"Authorization": "Bearer alice-key", "X-Agent-ID": "agent-b"},
    )
    assert refused.status_code == 404
    assert refused.json()["code"] == "agent_not_reachable"
    conv = conversation()
    async with mcp_http(served.url, "root-key", {"X-Agent-ID": "agent-b"}) as admin:
        added = payload(
            await admin.call_tool("add_memory", {"text": "I play cello.", "conversation_id": conv})
        )
    assert added["added"][0]["agent_id"] == "agent-b"
    async with mcp_http(served.url, "root-key") as unnamed:
        error = tool_error(await unnamed.call_tool("list_memories", {}))
    assert error["code"] == "invalid_scope"  # an admin key must name the agent


async def test_agent_a_never_sees_agent_b_through_mcp(served: NmafcProcess) -> None:
    """1,000 randomized calls by either key over the same conversation names: 0 leaks."""
    conv = conversation()
    agents = {"alice-key": "agent-a", "bob-key": "agent-b"}
    mine: dict[str, list[str]] = {key: [] for key in agents}
    words: dict[str, str] = {}
    async with (
        mcp_http(served.url, "alice-key") as alice,
        mcp_http(served.url, "bob-key") as bob,
    ):
        clients = {"alice-key": alice, "bob-key": bob}
        for key, client in clients.items():
            for i in range(3):
                word = f"{key.split('-')[0]}word{i}"
                words[word] = key
                added = payload(
                    await client.call_tool(
                        "add_memory",
                        {"text": f"My {word} password is {word}.", "conversation_id": conv},
                    )
                )
                mine[key] += [m["id"] for m in added["added"]]
        tally = {"calls": 0, "leaks": 0}

        async def caller(seed: int, count: int) -> None:
            rng = random.Random(seed)
            for _ in range(count):
                key = rng.choice(list(agents))
                other = "bob-key" if key == "alice-key" else "alice-key"
                name, arguments = _random_call(rng, conv, words, mine[other])
                result = await clients[key].call_tool(name, arguments)
                tally["calls"] += 1
                if name not in ("search_memories", "list_memories") and (
                    not result.is_error or tool_error(result)["code"] != "memory_not_found"
                ):
                    tally["leaks"] += 1  # another agent's memory answered
                seen = dict(result.structured_content or {})
                seen.pop("query", None)  # a search echoes its query, which may name a word
                text = json.dumps(seen)
                foreign = [w for w, owner in words.items() if owner == other and w in text]
                tally["leaks"] += bool(foreign) or agents[other] in text

        async with anyio.create_task_group() as group:
            for seed in range(4):  # four callers at once keep the test short
                group.start_soon(caller, seed, 250)
    assert tally == {"calls": 1000, "leaks": 0}
    # The other agent's memories are intact: every refused edit changed nothing.
    async with mcp_http(served.url, "bob-key") as bob:
        for memory_id in mine["bob-key"]:
            kept = payload(
                await bob.call_tool("get_memory", {"memory_id": memory_id, "conversation_id": conv})
            )
            assert kept["version"] == 1
            assert kept["valid"]


def _random_call(
    rng: random.Random, conv: str, words: dict[str, str], theirs: list[str]
) -> tuple[str, dict[str, Any]]:
    """A read of the caller's own conversation, or a try at one of the other agent's ids."""
    kind = rng.choice(["search", "list", "get", "history", "update", "delete"])
    scope = rng.choice(["conversation", "agent"])
    if kind == "search":
        query = f"{rng.choice(list(words))} password"
        return "search_memories", {"query": query, "conversation_id": conv, "scope": scope}
    if kind == "list":
        return "list_memories", {"conversation_id": conv, "scope": scope}
    arguments: dict[str, Any] = {"memory_id": rng.choice(theirs), "conversation_id": conv}
    if kind == "update":
        return "update_memory", {**arguments, "content": "overwritten"}
    if kind == "delete":
        return "delete_memory", arguments
    return ("get_memory" if kind == "get" else "memory_history"), {**arguments, "scope": scope}

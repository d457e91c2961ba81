"""Code written for Mem0 runs unchanged: the mem0ai clients with ``host=`` NMAFC, and the README."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from nmafc.testing.processes import NmafcProcess
from tests.api.mem0.conftest import off_loopback

ROOT = Path(__file__).resolve().parents[3]


def test_the_readme_mem0_snippet_runs_and_finds_what_it_added(
    served: NmafcProcess, tmp_path: Path
) -> None:
    section = (ROOT / "README.md").read_text().split("## Other doors", 1)[1]
    snippet = re.search(r"```python\n(.*?)```", section, re.S)
    assert snippet, "README.md lacks the Mem0 snippet"
    code = snippet.group(1).replace("http://127.0.0.1:8000", served.url)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "MEM0_DIR": str(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "vegetarian" in done.stdout


def user() -> str:
    return f"u-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def alice(mem0: ModuleType, served: NmafcProcess) -> Any:
    return mem0.MemoryClient(api_key="alice-key", host=served.url)


@pytest.fixture
def bob(mem0: ModuleType, served: NmafcProcess) -> Any:
    return mem0.MemoryClient(api_key="bob-key", host=served.url)


def test_add_search_get_all_get_update_history_delete_as_the_sdk_expects(alice: Any) -> None:
    me = user()
    added = alice.add(
        [
            {"role": "user", "content": "I'm a vegetarian and I live in Lisbon."},
            {"role": "assistant", "content": "Noted!"},
        ],
        user_id=me,
    )
    assert added["results"]
    assert {r["event"] for r in added["results"]} == {"ADD"}
    found = alice.search("what should I cook for dinner?", filters={"user_id": me})
    assert found["results"]
    best = found["results"][0]
    assert set(best) >= {"id", "memory", "score", "user_id", "agent_id", "created_at"}
    assert best["user_id"] == me
    assert best["agent_id"] == "agent-a"
    assert any("vegetarian" in r["memory"] for r in found["results"])
    listed = alice.get_all(filters={"user_id": me})
    assert listed["count"] == len(listed["results"]) >= 1
    memory_id = next(r["id"] for r in listed["results"] if "vegetarian" in r["memory"])
    one = alice.get(memory_id)
    assert one["id"] == memory_id
    assert "vegetarian" in one["memory"]
    updated = alice.update(memory_id, text="User is vegan.")
    assert updated["memory"] == "User is vegan."
    assert alice.get(memory_id)["memory"] == "User is vegan."
    events = alice.history(memory_id)
    assert [e["event"] for e in events][:2] == ["ADD", "UPDATE"]
    assert events[1]["new_memory"] == "User is vegan."
    assert alice.delete(memory_id)["message"]
    assert alice.history(memory_id)[-1]["event"] == "DELETE"
    gone = alice.search("vegan", filters={"user_id": me})["results"]
    assert memory_id not in [r["id"] for r in gone]
    assert alice.delete_all(user_id=me)["message"]
    assert alice.get_all(filters={"user_id": me})["results"] == []
    assert off_loopback() == []


def test_filters_with_and_or_over_users_and_runs(alice: Any) -> None:
    ann, ben, run = user(), user(), "trip-1"
    alice.add("My passport number ends in 42.", user_id=ann, infer=False)
    alice.add("Ben prefers aisle seats.", user_id=ben, infer=False)
    alice.add("This trip goes to Kyoto.", user_id=ann, run_id=run, infer=False)
    either = alice.search("travel details", filters={"OR": [{"user_id": ann}, {"user_id": ben}]})
    texts = {r["memory"] for r in either["results"]}
    assert {"My passport number ends in 42.", "Ben prefers aisle seats."} <= texts
    in_run = alice.search("where to?", filters={"AND": [{"user_id": ann}, {"run_id": run}]})
    assert [r["memory"] for r in in_run["results"]] == ["This trip goes to Kyoto."]
    assert in_run["results"][0]["run_id"] == run
    whole_agent = alice.get_all(filters={"agent_id": "agent-a"}, page=1, page_size=2)
    assert len(whole_agent["results"]) == 2
    assert whole_agent["count"] >= 3
    assert whole_agent["next"]
    page_two = alice.get_all(filters={"agent_id": "agent-a"}, page=2, page_size=2)
    assert {r["id"] for r in page_two["results"]}.isdisjoint(
        r["id"] for r in whole_agent["results"]
    )


def test_two_keys_never_see_each_other(alice: Any, bob: Any, mem0: ModuleType) -> None:
    same = user()
    alice.add("Alice's locker code is 7741.", user_id=same, infer=False)
    mine = alice.get_all(filters={"user_id": same})["results"]
    assert bob.get_all(filters={"user_id": same})["results"] == []
    assert bob.search("locker code", filters={"user_id": same})["results"] == []
    everywhere = bob.search("locker code", filters={"user_id": "*"})["results"]
    assert all(r["agent_id"] == "agent-b" for r in everywhere)
    assert "7741" not in str(everywhere)
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):
        bob.get(mine[0]["id"])
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):
        bob.update(mine[0]["id"], text="hacked")
    with pytest.raises(mem0.exceptions.MemoryNotFoundError):
        bob.delete(mine[0]["id"])
    # Naming Alice's agent does not widen Bob's key.
    with pytest.raises(mem0.exceptions.MemoryNotFoundError, match="agent-a"):
        bob.get_all(filters={"agent_id": "agent-a"})
    bob.delete_all(user_id=same)
    assert alice.get(mine[0]["id"])["memory"] == "Alice's locker code is 7741."


def test_mem0_only_parameters_get_a_400_naming_them(alice: Any, mem0: ModuleType) -> None:
    errors = mem0.exceptions
    with pytest.raises(errors.ValidationError, match="metadata"):
        alice.add("I like jazz.", user_id=user(), metadata={"source": "chat"})
    with pytest.raises(errors.ValidationError, match="threshold"):
        alice.search("jazz", filters={"user_id": user()}, threshold=0.5)
    with pytest.raises(errors.ValidationError, match="categories"):
        alice.get_all(filters={"user_id": user()}, categories=["music"])
    with pytest.raises(errors.ValidationError, match="app_id"):
        alice.search("jazz", filters={"app_id": "web"})
    with pytest.raises(errors.ValidationError, match="expiration_date"):
        alice.update(str(uuid.uuid4()), text="x", expiration_date="2030-01-01")


def test_nmafc_routes_are_untouched_and_the_mem0_ones_stay_out_of_openapi(
    served: NmafcProcess,
) -> None:
    rest = httpx.get(f"{served.url}/v1/memories", headers={"Authorization": "Bearer alice-key"})
    assert rest.status_code == 200
    assert "items" in rest.json()
    paths = httpx.get(f"{served.url}/openapi.json").json()["paths"]
    assert not [p for p in paths if p.startswith("/v3") or p.endswith("/") or "ping" in p]
    assert "/mcp" not in paths


@pytest.mark.anyio
async def test_async_client_does_the_same(mem0: ModuleType, served: NmafcProcess) -> None:
    me = user()
    client = mem0.AsyncMemoryClient(api_key="alice-key", host=served.url)
    added = await client.add("I drink my coffee black.", user_id=me)
    assert added["results"][0]["event"] == "ADD"
    found = await client.search("coffee", filters={"user_id": me})
    memory_id = found["results"][0]["id"]
    assert (await client.get(memory_id))["id"] == memory_id
    assert (await client.get_all(filters={"user_id": me}))["count"] == 1
    await client.update(memory_id, text="User drinks coffee with oat milk.")
    assert [e["event"] for e in await client.history(memory_id)] == ["ADD", "UPDATE"]
    await client.delete(memory_id)
    await client.delete_all(user_id=me)
    assert (await client.get_all(filters={"user_id": me}))["results"] == []
    assert off_loopback() == []

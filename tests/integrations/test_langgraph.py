"""``NmafcStore`` through LangGraph's own API, sync and async, against a real ``nmafc serve``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from nmafc.integrations.langgraph import NmafcStore, conversation_of, namespace_of
from nmafc.testing.processes import NmafcProcess


@pytest.fixture
def served(doors_service: NmafcProcess) -> NmafcProcess:
    return doors_service


@pytest.fixture
def store(served: NmafcProcess) -> Iterator[NmafcStore]:
    made = NmafcStore(served.url, api_key="lg-key")
    yield made
    made.close()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def space() -> tuple[str, ...]:
    return ("users", f"u{uuid.uuid4().hex[:8]}", "memories")


def test_namespaces_map_onto_conversations_and_back() -> None:
    for namespace in [("users", "alice"), ("a b", "ünï/cødé", "x@y"), ("one",)]:
        conversation = conversation_of(namespace)
        assert conversation.startswith("lg.")
        assert namespace_of(conversation) == namespace
    assert namespace_of("default") is None


def test_put_get_search_delete_keep_langgraph_semantics(store: NmafcStore) -> None:
    ns = space()
    value = {"text": "Prefers window seats on long flights", "tags": ["travel"], "n": 3}
    store.put(ns, "seat", value)
    store.put(ns, "food", {"text": "Allergic to peanuts"})
    got = store.get(ns, "seat")
    assert got is not None
    assert (got.key, got.namespace, got.value) == ("seat", ns, value)  # the dict, faithfully
    store.put(ns, "seat", {"text": "Prefers aisle seats now"})
    assert store.get(ns, "seat").value == {"text": "Prefers aisle seats now"}  # type: ignore[union-attr]
    found = store.search(ns[:2], query="which seat should I book?")
    assert found[0].key == "seat"
    assert found[0].score is not None
    assert [i.key for i in store.search(ns, filter={"text": "Allergic to peanuts"})] == ["food"]
    assert ns in store.list_namespaces(prefix=ns[:1])
    store.delete(ns, "seat")
    assert store.get(ns, "seat") is None
    assert [i.key for i in store.search(ns)] == ["food"]


def test_another_key_sees_nothing_of_this_store(store: NmafcStore, served: NmafcProcess) -> None:
    ns = space()
    store.put(ns, "secret", {"text": "The vault code is 1234"})
    other = NmafcStore(served.url, api_key="other-key")
    try:
        assert other.get(ns, "secret") is None
        assert other.search(ns[:1], query="vault code") == []
        assert ns not in other.list_namespaces()
    finally:
        other.close()


class State(TypedDict):
    user: str
    said: str
    recalled: str


def remember_then_recall(state: State, runtime: Runtime) -> dict[str, str]:
    """A graph node that writes memory through the store and reads it back by meaning."""
    assert runtime.store is not None
    ns = ("users", state["user"], "memories")
    runtime.store.put(ns, uuid.uuid4().hex, {"text": state["said"]})
    hits = runtime.store.search(ns, query="where does the user live?", limit=1)
    return {"recalled": hits[0].value["text"] if hits else ""}


def test_a_graph_node_writes_and_reads_memory_through_the_store(store: NmafcStore) -> None:
    graph = (
        StateGraph(State)
        .add_node("memory", remember_then_recall)
        .add_edge(START, "memory")
        .add_edge("memory", END)
        .compile(store=store)
    )
    user = f"u{uuid.uuid4().hex[:8]}"
    out = graph.invoke({"user": user, "said": "I live in Porto, near the river.", "recalled": ""})
    assert out["recalled"] == "I live in Porto, near the river."


@pytest.mark.anyio
async def test_the_async_api_does_the_same(store: NmafcStore) -> None:
    ns = space()
    await store.aput(ns, "pet", {"text": "Has a cat called Miso"})
    await store.aput(ns, "job", {"text": "Works as a nurse"})
    got = await store.aget(ns, "pet")
    assert got is not None
    assert got.value == {"text": "Has a cat called Miso"}
    found = await store.asearch(ns, query="what animal do they own?", limit=1)
    assert [i.key for i in found] == ["pet"]
    assert ns in await store.alist_namespaces(prefix=ns[:2])
    await store.adelete(ns, "pet")
    assert await store.aget(ns, "pet") is None

"""Every ``/v1/memories`` route over HTTP against the real app and stores."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from nmafc.errors import InvalidInput, MemoryNotFound, VersionConflict

from .conftest import Running

pytestmark = pytest.mark.anyio

SAID = "2023-05-08T13:56:00Z"


async def test_add_messages_stores_turns_and_facts(running: Running) -> None:
    nmafc = running.client(agent_id="support-bot", conversation_id="alice")
    result = await nmafc.add(
        [{"role": "user", "speaker": "Alice", "content": "I'm allergic to shellfish.",
          "timestamp": SAID}]
    )  # fmt: skip
    assert [t.content for t in result.turns] == ["I'm allergic to shellfish."]
    assert result.turns[0].occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert len(result.added) == 1
    assert result.added[0].agent_id == "support-bot"
    assert result.added[0].conversation_id == "alice"


async def test_add_explicit_facts_keeps_their_tier_and_links(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    result = await nmafc.add(
        facts=[{"content": "Caroline is allergic to peanuts.", "entity": "caroline_allergy",
                "tier": "CoreAnchor", "related_entities": ["caroline"]}]
    )  # fmt: skip
    added = result.added[0]
    assert (added.tier, added.entity, added.related_entities) == (
        "CoreAnchor", "caroline_allergy", ["caroline"],
    )  # fmt: skip
    assert added.expires_turn is None  # CoreAnchor never decays


async def test_add_needs_exactly_one_of_messages_or_facts(running: Running) -> None:
    both = {"messages": [{"content": "x"}], "facts": [{"content": "y"}]}
    for body in ({}, both):
        response = await running.http.post("/v1/memories", json=body, headers={"X-Agent-ID": "a"})
        assert response.status_code == 422
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["code"] == "request_validation_failed"


async def test_search_returns_a_dated_context_and_breakdowns(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    await nmafc.add([{"speaker": "Maya", "content": "I live in Porto now.", "timestamp": SAID}])
    found = await nmafc.search("Where does Maya live?", top_k=5, budget_tokens=200)
    assert "Porto" in found.context
    assert found.tokens <= 200
    assert found.hits
    assert found.hits[0].breakdown.fused > 0
    assert found.reinforced >= 1
    read_only = await nmafc.search("Where does Maya live?", reinforce=False)
    assert read_only.reinforced == 0


async def test_search_returns_the_configured_number_of_hits_unless_asked(
    running: Running,
) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    await nmafc.add(facts=[{"content": f"Maya planted tree number {n}."} for n in range(30)])
    default = await nmafc.search("What did Maya plant?", reinforce=False)
    more = await nmafc.search("What did Maya plant?", reinforce=False, top_k=25)
    assert len(default.hits) == running.state.settings.retrieval.top_k == 20
    assert len(more.hits) == 25
    assert [h.id for h in more.hits[:20]] == [h.id for h in default.hits]
    assert more.context == default.context  # the hits' count never changes the context


async def test_search_as_of_a_turn_sees_the_past(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    await nmafc.add(facts=[{"content": "Maya lives in Lisbon.", "entity": "maya_home"}])
    await nmafc.add(["turn one", "turn two"])
    await nmafc.add(
        facts=[{"content": "Maya lives in Porto.", "entity": "maya_home",
                "overrides_entity": "maya_home"}]
    )  # fmt: skip
    now = await nmafc.search("Where does Maya live?", reinforce=False)
    then = await nmafc.search("Where does Maya live?", as_of=0, reinforce=False)
    assert "Porto" in now.context
    assert "Lisbon" not in now.context
    assert "Lisbon" in then.context


async def test_search_scope_agent_spans_conversations(running: Running) -> None:
    agent = running.client(agent_id="a")
    await agent.scoped(conversation_id="one").add(["The blue key opens the shed."])
    await agent.scoped(conversation_id="two").add(["The red key opens the garage."])
    one = agent.scoped(conversation_id="one")
    narrow = await one.search("Which key opens the garage?", reinforce=False)
    wide = await one.search("Which key opens the garage?", scope="agent", reinforce=False)
    assert "red key" not in narrow.context
    assert "red key" in wide.context


async def test_list_pages_with_a_cursor_and_filters(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    facts = [{"content": f"Fact number {i}.", "tier": "CoreAnchor" if i % 2 else "ActiveContext"}
             for i in range(7)]  # fmt: skip
    await nmafc.add(facts=facts)
    first = await nmafc.list(limit=3)
    assert len(first.items) == 3
    assert first.next_cursor
    everything = [m async for m in nmafc.iter_memories(limit=3)]
    assert [m.content for m in everything] == [f"Fact number {i}." for i in range(7)]
    core = await nmafc.list(tier="CoreAnchor")
    assert {m.content for m in core.items} == {"Fact number 1.", "Fact number 3.",
                                               "Fact number 5."}  # fmt: skip
    forgotten = everything[0]
    await nmafc.forget(forgotten.id)
    assert forgotten.id not in {m.id for m in (await nmafc.list()).items}
    with_invalid = await nmafc.list(include_invalidated=True)
    assert forgotten.id in {m.id for m in with_invalid.items}


async def test_a_malformed_cursor_is_422(running: Running) -> None:
    with pytest.raises(InvalidInput):
        await running.client(agent_id="a").list(cursor="not-a-cursor")


async def test_a_path_that_is_not_a_memory_id_is_an_unknown_memory(running: Running) -> None:
    response = await running.http.get("/v1/memories/not-a-uuid", headers={"X-Agent-ID": "a"})
    assert (response.status_code, response.json()["code"]) == (404, "memory_not_found")


async def test_get_patch_delete_and_history_of_one_memory(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    added = (await nmafc.add(facts=[{"content": "Jon plays chess."}])).added[0]
    assert (await nmafc.get(added.id)).content == "Jon plays chess."

    edited = await nmafc.update(added.id, content="Jon plays go.", expected_version=1)
    assert (edited.version, edited.content) == (2, "Jon plays go.")
    retiered = await nmafc.update(added.id, tier="CoreAnchor")
    assert retiered.tier == "CoreAnchor"
    assert retiered.version == 2

    history = await nmafc.history(added.id)
    assert [v.content for v in history.versions] == ["Jon plays chess.", "Jon plays go."]
    assert [e.kind for e in history.events] == ["add", "update", "update"]

    gone = await nmafc.forget(added.id)
    assert gone.valid is False
    assert (await nmafc.get(added.id)).valid is False
    with pytest.raises(MemoryNotFound):
        await nmafc.forget(added.id)


async def test_a_stale_expected_version_is_409(running: Running) -> None:
    nmafc = running.client(agent_id="a")
    added = (await nmafc.add(facts=[{"content": "Ana paints."}])).added[0]
    await nmafc.update(added.id, content="Ana paints watercolours.")
    with pytest.raises(VersionConflict) as caught:
        await nmafc.update(added.id, content="Ana sculpts.", expected_version=1)
    assert caught.value.status == 409
    assert (await nmafc.get(added.id)).content == "Ana paints watercolours."


async def test_unknown_ids_are_404_everywhere(running: Running) -> None:
    nmafc = running.client(agent_id="a")
    unknown = str(uuid.uuid4())
    for call in (
        nmafc.get(unknown),
        nmafc.history(unknown),
        nmafc.forget(unknown),
        nmafc.update(unknown, content="x"),
    ):
        with pytest.raises(MemoryNotFound) as caught:
            await call
        assert caught.value.status == 404


async def test_rollback_returns_memory_to_a_turn(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    await nmafc.add(["I adopted a cat named Miso."])
    await nmafc.add(["I gave Miso away."])
    result = await nmafc.rollback(1)
    assert (result.removed, result.to_turn) == (1, 1.0)
    contents = [m.content for m in (await nmafc.list()).items]
    assert any("adopted a cat" in c for c in contents)
    assert not any("gave Miso away" in c for c in contents)
    assert (await nmafc.events(kinds=["rollback"])).items[0].kind == "rollback"


async def test_purge_returns_a_receipt_per_store_and_leaves_a_tombstone(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    await nmafc.add(["Secret one.", "Secret two."])
    await nmafc.scoped(conversation_id="other").add(["Secret three."])
    receipt = await nmafc.purge()
    assert receipt.cold["turns"] == 2
    assert receipt.cold["facts"] == 2
    assert receipt.hot_rows >= 2
    assert receipt.tombstone_event_id
    assert (await nmafc.list()).items == []
    assert len((await nmafc.list(scope="agent")).items) == 1
    whole = await nmafc.purge(scope="agent")
    assert whole.cold["turns"] == 1
    assert (await nmafc.list(scope="agent")).items == []
    tombstones = (await nmafc.events(scope="agent")).items
    assert [e.kind for e in tombstones] == ["purge", "purge"]
    assert all(e.records == [] for e in tombstones)


async def test_events_page_forward_from_an_id(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    await nmafc.add(["one", "two", "three"])
    newest = await nmafc.events(limit=2)
    assert len(newest.items) == 2
    everything = await nmafc.events(after_id=0, limit=100)
    first = everything.items[0].id
    after = await nmafc.events(after_id=first)
    assert [e.id for e in after.items] == [e.id for e in everything.items[1:]]
    assert after.next_after_id == everything.items[-1].id


async def test_graph_links_entities_and_stats_count_them(running: Running) -> None:
    nmafc = running.client(agent_id="a", conversation_id="c")
    await nmafc.add(
        facts=[
            {"content": "Caroline joined a support group.", "entity": "caroline_group",
             "related_entities": ["caroline"]},
            {"content": "Caroline is a counsellor.", "entity": "caroline",
             "tier": "CoreAnchor"},
        ]
    )  # fmt: skip
    graph = await nmafc.graph()
    assert {n.entity for n in graph.nodes} == {"caroline_group", "caroline"}
    assert [(e.source, e.target) for e in graph.edges] == [("caroline_group", "caroline")]
    stats = await nmafc.stats()
    assert stats.records == {"ActiveContext": 1, "CoreAnchor": 1}
    assert sum(stats.weight_histogram) == 2

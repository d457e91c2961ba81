"""Remember stores turns and facts; recall returns a budgeted, explained, reinforcing context."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import event

from nmafc.core.facts import FactDraft
from nmafc.core.scope import AgentScope, Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions

from .helpers import START, assert_consistent, say

READ = RecallOptions(reinforce=False)


def test_remember_stores_every_message_as_a_turn_and_its_facts(
    engine: MemoryEngine, scope: Scope
) -> None:
    result = engine.remember(scope, [say("I'm allergic to shellfish."), say("Noted!", "assistant")])
    assert [t.turn for t in result.turns] == [1.0, 2.0]
    assert result.turn == 2.0
    assert len(result.added) == 2
    assert result.added[0].source_turn_ids == (result.turns[0].id,)
    assert result.added[0].valid_at == 1.0
    assert result.added[1].valid_at == 2.0
    assert engine.stats(scope).turns == 2
    assert_consistent(engine, scope)


def test_recall_finds_the_fact_within_budget_and_explains_why(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(
        scope,
        [
            say("I'm allergic to shellfish."),
            say("My sister Melanie paints landscapes."),
            say("We went hiking in the Alps last summer."),
        ],
    )
    result = engine.recall(scope, "what food allergy do I have?", RecallOptions(budget_tokens=200))
    assert "shellfish" in result.context
    assert result.tokens <= 200
    top = result.hits[0]
    assert top.kind == "fact"
    assert "shellfish" in top.content
    assert top.breakdown.vector is not None
    assert top.breakdown.vector > 0.3
    assert top.breakdown.weight == pytest.approx(math.exp(-0.005 * 2))  # said 2 turns ago
    assert "vector" in top.breakdown.ranks
    assert result.evidence_turn_ids


def test_recall_reinforces_what_it_used_in_one_batched_event(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(
        scope,
        [
            say("I'm allergic to shellfish."),
            say("I'm allergic to cats too."),
            say("I live in Boston."),
        ],
    )
    before = engine.stats(scope).events
    result = engine.recall(scope, "allergy", RecallOptions(budget_tokens=300))
    after = engine.stats(scope).events
    assert "Boston" in result.context
    # Both allergies were used (shown as a line or through their turn); Boston was shown
    # but is not about the question.
    k = {r.content: r.k for r in engine.page(scope).records}
    assert k == {
        "Caroline: I'm allergic to shellfish.": 1,
        "Caroline: I'm allergic to cats too.": 1,
        "Caroline: I live in Boston.": 0,
    }
    assert result.reinforced == 2
    assert after.get("reinforce", 0) == before.get("reinforce", 0) + 1
    assert_consistent(engine, scope)


def test_read_only_recall_changes_nothing(engine: MemoryEngine, scope: Scope) -> None:
    engine.remember(scope, [say("I'm allergic to shellfish.")])
    before = (engine.stats(scope).events, engine.ctx.hot.store._table.version)
    result = engine.recall(scope, "allergy", RecallOptions(reinforce=False))
    assert result.reinforced == 0
    assert (engine.stats(scope).events, engine.ctx.hot.store._table.version) == before


def test_recall_of_an_unknown_scope_is_empty_not_an_error(engine: MemoryEngine) -> None:
    result = engine.recall(Scope("nobody", "nothing"), "anything")
    assert (result.context, result.hits) == ("", [])


def test_agent_wide_recall_spans_conversations_but_never_agents(engine: MemoryEngine) -> None:
    engine.remember(Scope("agent-x", "monday"), [say("I adopted a cat named Luna.")])
    engine.remember(Scope("agent-x", "tuesday"), [say("Luna knocked over a vase.")])
    engine.remember(Scope("agent-y", "monday"), [say("My cat Luna is grey.")])
    wide = engine.recall(AgentScope("agent-x"), "Luna the cat", RecallOptions(reinforce=False))
    owners = {h.record.conversation_id for h in wide.hits if h.record}
    assert owners == {"monday", "tuesday"}
    assert all(h.record.agent_id == "agent-x" for h in wide.hits if h.record)
    assert "grey" not in wide.context


def test_listeners_hear_every_committed_write_once(engine: MemoryEngine, scope: Scope) -> None:
    heard: list[tuple[Scope, list[str]]] = []
    engine.subscribe(lambda s, events: heard.append((s, [e.kind.value for e in events])))
    engine.remember(scope, [say("I keep bees.")])
    engine.recall(scope, "bees", RecallOptions())
    engine.purge(scope)
    assert [kinds for _, kinds in heard] == [["turn", "add"], ["reinforce"], ["purge"]]
    assert {s for s, _ in heard} == {scope}


def test_recall_ranks_the_same_every_time(engine: MemoryEngine, scope: Scope) -> None:
    # The keyword, reply and date searches run in parallel threads; a question naming the
    # day its answer was given exercises all three on the same turns.
    engine.remember(
        scope,
        [
            say("Who played at the concert last night?", speaker="Melanie"),
            say("It was Matt Patterson, he was great.", minutes=1),
            say("I loved the concert, the music was so good.", speaker="Melanie", minutes=2),
        ],
    )
    question = f"Who played at the concert on {START:%d %B %Y}?"
    rankings = {
        tuple((hit.id, round(hit.score, 12)) for hit in engine.recall(scope, question, READ).hits)
        for _ in range(40)
    }
    assert len(rankings) == 1


def test_top_k_sizes_the_hits_but_not_the_context(engine: MemoryEngine, scope: Scope) -> None:
    engine.remember(
        scope, [say(f"Melanie painted landscape number {n} by the lake.") for n in range(12)]
    )
    question = "What did Melanie paint?"
    every = engine.recall(scope, question, READ)
    three = engine.recall(scope, question, RecallOptions(reinforce=False, top_k=3))
    assert len(every.hits) > 3
    assert [h.id for h in three.hits] == [h.id for h in every.hits[:3]]
    assert three.context == every.context
    assert three.fact_ids == every.fact_ids
    assert len(three.fact_ids) > 3  # the context holds more than the hits returned


def test_a_scope_that_never_heard_a_turn_is_not_searched_for_turns(
    engine: MemoryEngine, scope: Scope
) -> None:
    statements: list[str] = []

    @event.listens_for(engine.ctx.cold.engine, "before_cursor_execute")
    def _capture(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        statements.append(statement)

    engine.ingest(scope, [FactDraft("Caroline went hiking on 13 October 2023", "hike")])
    question = "Where did Caroline go on 13 October 2023?"  # names a date: both turn searches
    facts_only = engine.recall(scope, question, READ)
    assert "hiking" in facts_only.context
    assert not any("turns" in s for s in statements)

    engine.remember(scope, [say("We hiked up Mont Blanc on 13 October 2023!")])
    statements.clear()
    heard = engine.recall(scope, question, READ)
    assert any(h.kind == "turn" for h in heard.hits)
    assert any("turns" in s for s in statements)

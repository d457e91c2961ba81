"""Rollback replays the log to a turn; purge erases a scope or agent and leaves a tombstone."""

from __future__ import annotations

import json

from sqlalchemy import select

from nmafc.core.events import fold
from nmafc.core.scope import AgentScope, Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.storage.cold.schema import events

from .helpers import assert_consistent, log_state, say


def test_rollback_restores_the_working_set_of_that_turn(engine: MemoryEngine, scope: Scope) -> None:
    first = engine.remember(scope, [say("I live in Paris."), say("I have a dog named Rex.")])
    with engine.ctx.cold.read() as session:
        at_two = fold(session.events.through_turn(scope, 2))
    engine.remember(scope, [say("Busy week.")])  # turn 3: what follows is stamped 3
    engine.recall(scope, "dog", RecallOptions())
    engine.update(scope, first.added[0].id, content="Caroline lives in Berlin.")
    engine.forget(scope, first.added[1].id)
    engine.remember(scope, [say("I started learning piano.")])

    result = engine.rollback(scope, 2)
    assert result.removed == 2
    assert result.restored == 2
    assert result.turns_retracted == 2
    assert result.event_id is not None
    state = engine.working_set(scope)
    assert {r.id: (r.content, r.k, r.tier) for r in state.values()} == {
        r.id: (r.content, r.k, r.tier) for r in at_two.values()
    }
    facts = engine.recall(scope, "piano Paris Berlin", RecallOptions(reinforce=False)).context
    assert "Paris" in facts
    assert "Berlin" not in facts
    assert "piano" not in facts
    assert engine.stats(scope).turns == 2
    assert engine.stats(scope).turn == 4  # the clock keeps running
    assert_consistent(engine, scope)


def test_rollback_is_itself_history_and_can_be_rolled_forward_past(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("one")])
    engine.remember(scope, [say("two")])
    engine.rollback(scope, 1)
    engine.remember(scope, [say("three")])
    assert sorted(r.content for r in engine.working_set(scope).values()) == [
        "Caroline: one",
        "Caroline: three",
    ]
    assert log_state(engine, scope) == engine.working_set(scope)
    kinds = [e.kind.value for e in engine.events(scope, limit=100)]
    assert "rollback" in kinds


def test_rollback_to_the_present_changes_nothing(engine: MemoryEngine, scope: Scope) -> None:
    engine.remember(scope, [say("one")])
    result = engine.rollback(scope, 5)
    assert (result.restored, result.removed, result.event_id) == (0, 0, None)


def test_purge_erases_both_stores_and_leaves_a_content_free_tombstone(
    engine: MemoryEngine, scope: Scope
) -> None:
    neighbour = Scope(scope.agent_id, "other-conversation")
    engine.remember(scope, [say("My secret is the colour teal.")])
    engine.remember(neighbour, [say("I like jazz.")])
    receipt = engine.purge(scope)
    assert receipt.cold["turns"] == 1
    assert receipt.cold["facts"] == 1
    assert receipt.cold["scopes"] == 1
    assert receipt.hot_rows >= 2  # the record and the watermark row
    assert engine.ctx.hot.store.count(scope) == 0
    assert engine.recall(scope, "secret colour").context == ""
    with engine.ctx.cold.read() as session:
        rows = session.conn.execute(
            select(events.c.kind, events.c.payload).where(events.c.agent_id == scope.agent_id)
        ).all()
    tombstones = [payload for kind, payload in rows if kind == "purge"]
    assert len(tombstones) == 1
    assert "teal" not in json.dumps(tombstones)
    assert "jazz" in engine.recall(neighbour, "music", RecallOptions(reinforce=False)).context


def test_purging_an_agent_removes_every_conversation(engine: MemoryEngine) -> None:
    for conversation in ("a", "b", "c"):
        engine.remember(Scope("agent-gone", conversation), [say(f"fact in {conversation}")])
    engine.remember(Scope("agent-stays", "a"), [say("kept")])
    receipt = engine.purge(AgentScope("agent-gone"))
    assert receipt.cold["turns"] == 3
    assert receipt.cold["scopes"] == 3
    assert engine.stats(AgentScope("agent-gone")).records == {}
    assert engine.ctx.hot.store.count(AgentScope("agent-gone")) == 0
    assert engine.stats(AgentScope("agent-stays")).records == {"ActiveContext": 1}


def test_a_purged_scope_starts_afresh_without_stale_cache(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("old life")])
    engine.recall(scope, "life")  # loads the RAM working set
    engine.purge(scope)
    engine.remember(scope, [say("new life")])
    assert [r.content for r in engine.working_set(scope).values()] == ["Caroline: new life"]
    assert_consistent(engine, scope)

"""Statistics come from the Cold ROM: an agent-wide count loads no working set."""

from __future__ import annotations

import pytest

from nmafc.core.decay import weight_at
from nmafc.core.scope import AgentScope, Scope
from nmafc.engine.engine import MemoryEngine

from .helpers import let_turns_pass, say

CONVERSATIONS = 25


def test_agent_wide_stats_load_no_working_set_and_weigh_what_ram_would(
    engine: MemoryEngine, scope: Scope
) -> None:
    scopes = [Scope(scope.agent_id, f"c{i}") for i in range(CONVERSATIONS)]
    for index, conversation in enumerate(scopes):
        engine.remember(conversation, [say(f"I own {index} cats."), say(f"Bob is {index}.")])
        let_turns_pass(engine, conversation, index)
    cache = engine.ctx.hot.cache
    cache.drop()

    stats = engine.stats(AgentScope(scope.agent_id))

    assert [s for s in scopes if cache.get(s) is not None] == []
    assert sum(stats.records.values()) == 2 * CONVERSATIONS
    assert stats.turns == 2 * CONVERSATIONS
    # The same weights as the working sets would give, once they are loaded.
    weights = []
    for conversation in scopes:
        now = engine.stats(conversation).turn
        weights += [
            weight_at(r, now, engine.ctx.decay) for r in engine.working_set(conversation).values()
        ]
    assert stats.mean_weight == pytest.approx(sum(weights) / len(weights))
    histogram = [0] * 10
    for w in weights:
        histogram[min(9, int(w * 10))] += 1
    assert stats.weight_histogram == histogram
    assert len({round(w, 6) for w in weights}) > 1  # the clocks differ, so do the weights


def test_a_conversations_stats_load_no_working_set_either(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("I live in Lisbon.")])
    engine.ctx.hot.cache.drop()
    stats = engine.stats(scope)
    assert engine.ctx.hot.cache.get(scope) is None
    assert sum(stats.records.values()) == 1
    assert stats.mean_weight is not None

"""Agent-wide recall is one bounded query per list: it never loads a conversation into RAM."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from nmafc.core.facts import FactDraft
from nmafc.core.scope import AgentScope, Scope
from nmafc.core.tiers import Tier
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.errors import StoreUnavailable
from nmafc.settings import Settings

from .helpers import say

AGENT = "agent-wide"
CONVERSATIONS = 24
READ = RecallOptions(reinforce=False)


def _fill(settings: Settings, embedder: object) -> None:
    """An agent with many conversations (one knows where the key is), and a neighbour."""
    writer = MemoryEngine.open(settings, embedder=embedder)  # type: ignore[arg-type]
    try:
        for n in range(CONVERSATIONS):
            said = [say(f"We planned trip number {n} to the mountains.")]
            if n == 17:
                said.append(say("The spare key is under the blue flowerpot.", minutes=1))
            writer.remember(Scope(AGENT, f"c{n}"), said)
        writer.remember(Scope("agent-next-door", "c17"), [say("My spare key is in the shed.")])
    finally:
        writer.close()


@pytest.fixture
def reopened(settings: Settings, shared_embedder: object) -> Iterator[MemoryEngine]:
    """The filled stores opened by a fresh process: nothing is in RAM yet."""
    _fill(settings, shared_embedder)
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    yield engine
    engine.close()


def _loads(engine: MemoryEngine) -> tuple[int, int, int]:
    return engine.ctx.hot.loads, engine.ctx.archive.loads, engine.ctx.hot.cache.nbytes()


def test_an_agent_wide_search_finds_a_fact_of_a_conversation_never_loaded(
    reopened: MemoryEngine,
) -> None:
    result = reopened.recall(AgentScope(AGENT), "Where is the spare key?", READ)
    top = result.hits[0]
    assert top.record is not None
    assert (top.record.conversation_id, top.kind) == ("c17", "fact")
    assert "flowerpot" in result.context
    assert top.breakdown.vector is not None
    assert "vector" in top.breakdown.ranks
    assert "shed" not in result.context  # never across agents
    assert all(h.record.agent_id == AGENT for h in result.hits if h.record is not None)
    assert _loads(reopened) == (0, 0, 0)


def test_a_reinforcing_agent_wide_search_loads_nothing_either(reopened: MemoryEngine) -> None:
    result = reopened.recall(AgentScope(AGENT), "Where is the spare key?", RecallOptions())
    assert result.reinforced >= 1
    key = next(h for h in result.hits if h.record and "flowerpot" in h.record.content)
    assert reopened.get(Scope(AGENT, "c17"), key.id).k == 1
    assert _loads(reopened) == (0, 0, 0)


def test_the_sets_in_ram_are_searched_with_the_store_for_the_rest(
    reopened: MemoryEngine,
) -> None:
    held = Scope(AGENT, "c3")
    reopened.recall(held, "trip", READ)  # a conversation recall loads its own set
    reopened.ingest(held, [FactDraft("The spare bike key hangs by the door", "bike_key")])
    assert _loads(reopened)[:2] == (1, 1)
    result = reopened.recall(AgentScope(AGENT), "Where is the spare key?", READ)
    owners = {h.record.conversation_id for h in result.hits[:2] if h.record is not None}
    assert owners == {"c17", "c3"}
    assert _loads(reopened)[:2] == (1, 1)


def test_an_archived_fact_of_a_conversation_not_in_ram_is_found_by_meaning(
    settings: Settings, shared_embedder: object
) -> None:
    scope = Scope(AGENT, "archive")
    writer = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        goal = writer.ingest(
            scope, [FactDraft("Caroline is training for a marathon", "goal", Tier.ACTIVE_CONTEXT)]
        ).added[0]
        writer.remember(scope, [say("ok", "system")] * 470)  # decays it to the prune line
        writer.maintain(scope)
        assert writer.get(scope, goal.id).invalid_reason == "archived"
        writer.remember(Scope(AGENT, "other"), [say("We planned a trip.")])
    finally:
        writer.close()
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        # No word in common with the fact: only the vector search can find it.
        result = engine.recall(AgentScope(AGENT), "long distance running race", READ)
        assert goal.id in [h.id for h in result.hits]
        assert "vector" in next(h for h in result.hits if h.id == goal.id).breakdown.ranks
        assert _loads(engine) == (0, 0, 0)
    finally:
        engine.close()


def test_with_the_hot_store_down_an_agent_wide_search_asks_the_cold_rom(
    reopened: MemoryEngine,
) -> None:
    # As on S3: calls are guarded, and a failed one pauses Hot calls for the cooldown.
    reopened.ctx.hot.store.guard_calls(timeout_s=30.0, cooldown_s=600.0)
    table = Path(reopened.ctx.settings.resolved_hot_uri())
    shutil.move(table, table.with_name("hot.away"))
    try:
        with pytest.raises(StoreUnavailable):
            reopened.ctx.hot.store.ping()
        result = reopened.recall(AgentScope(AGENT), "Where is the spare key?", READ)
    finally:
        shutil.move(table.with_name("hot.away"), table)
    assert "flowerpot" in result.context
    assert _loads(reopened) == (0, 0, 0)

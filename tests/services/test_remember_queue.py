"""The durable remember queue and its service: committed first, remembered exactly once."""

from __future__ import annotations

import anyio
import pytest

from nmafc.core.events import EventKind
from nmafc.core.scope import AgentScope, Scope
from nmafc.core.turns import Message
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import EmptyMessages
from nmafc.services import RememberQueueService, ServiceRun

SCOPE = Scope("agent-q", "c1")


def turn_events(engine: MemoryEngine, scope: Scope = SCOPE) -> int:
    return sum(1 for e in engine.events(scope, limit=1000) if e.kind == EventKind.TURN)


def test_a_queued_exchange_is_remembered_once_however_often_it_is_drained(
    engine: MemoryEngine,
) -> None:
    item = engine.queue.enqueue(
        SCOPE, [Message("I moved to Porto."), Message("Nice!", "assistant")]
    )
    assert engine.stats(SCOPE).turns == 0
    assert [d.remembered for d in engine.queue.drain(SCOPE)] == [True]
    assert engine.queue.drain(SCOPE) == []
    # A late duplicate delivery (another replica, a retry) finds it claimed and writes nothing.
    assert engine.remember_queued(SCOPE, item, [Message("I moved to Porto.")]) is None
    assert engine.stats(SCOPE).turns == 2
    assert turn_events(engine) == 1


def test_the_service_drains_every_conversation_and_keeps_order(engine: MemoryEngine) -> None:
    other = Scope("agent-r", "c9")
    engine.queue.enqueue(SCOPE, [Message("first")])
    engine.queue.enqueue(SCOPE, [Message("second")])
    engine.queue.enqueue(other, [Message("elsewhere")])
    service = RememberQueueService(engine, enabled=True, interval_s=1, keep_done_s=0)
    assert service.run_once() == 3
    assert service.run_once() == 0
    records = engine.page(SCOPE, after=0, limit=10).records
    assert [r.content for r in records] == ["user: first", "user: second"]
    assert engine.stats(other).turns == 1
    with engine.ctx.cold.read() as session:
        assert session.pending.count(AgentScope(SCOPE.agent_id)) == 0  # done rows pruned


def test_invalid_exchanges_are_refused_at_enqueue(engine: MemoryEngine) -> None:
    with pytest.raises(EmptyMessages):
        engine.queue.enqueue(SCOPE, [Message("   ")])
    assert engine.queue.pending(SCOPE) == []


def test_purge_forgets_queued_exchanges(engine: MemoryEngine) -> None:
    engine.queue.enqueue(SCOPE, [Message("secret plans")])
    engine.purge(AgentScope(SCOPE.agent_id))
    assert engine.queue.pending(AgentScope(SCOPE.agent_id)) == []


@pytest.mark.anyio
async def test_the_service_runs_once_at_start_up_before_its_first_interval(
    engine: MemoryEngine,
) -> None:
    engine.queue.enqueue(SCOPE, [Message("left over from before a restart")])
    runs: list[ServiceRun] = []
    service = RememberQueueService(engine, enabled=True, interval_s=3600, keep_done_s=60)
    with anyio.move_on_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(service.run_forever, runs.append)
            while not runs:
                await anyio.sleep(0.02)
            group.cancel_scope.cancel()
    assert runs[0].items == 1
    assert engine.stats(SCOPE).turns == 1


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

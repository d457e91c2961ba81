"""The live hub: thread-safe hand-over, per-agent fan-out, bounded queues, drops."""

from __future__ import annotations

import asyncio
import threading

import pytest

from nmafc.core.events import Event, EventKind
from nmafc.core.scope import Scope
from nmafc.live.hub import DROPPED, LiveFilter, LiveHub, TooManySubscribers

pytestmark = pytest.mark.anyio


def event(i: int, kind: EventKind = EventKind.ADD) -> Event:
    return Event(kind=kind, turn=float(i), id=i, seq=i)


async def test_events_published_from_a_worker_thread_reach_the_agents_subscribers() -> None:
    hub = LiveHub(queue_size=10, max_subscribers=10)
    hub.bind(asyncio.get_running_loop())
    mine = hub.subscribe("a", LiveFilter())
    theirs = hub.subscribe("b", LiveFilter())
    worker = threading.Thread(target=hub.publish, args=(Scope("a", "c"), [event(1), event(2)]))
    worker.start()
    worker.join()
    got = [await asyncio.wait_for(mine.queue.get(), 5) for _ in range(2)]
    assert [e.id for e in got if isinstance(e, Event)] == [1, 2]
    assert all(isinstance(e, Event) and e.agent_id == "a" for e in got)
    assert theirs.queue.empty()


async def test_filters_pick_kinds_and_a_conversation() -> None:
    hub = LiveHub(queue_size=10, max_subscribers=10)
    hub.bind(asyncio.get_running_loop())
    sub = hub.subscribe("a", LiveFilter(frozenset({"add"}), "c1"))
    hub.publish(Scope("a", "c2"), [event(1)])
    hub.publish(Scope("a", "c1"), [event(2, EventKind.TURN), event(3)])
    hub.publish(Scope("a", "_agent"), [event(4, EventKind.ADD)])  # agent-wide reaches c1
    await asyncio.sleep(0.05)
    got = [sub.queue.get_nowait() for _ in range(sub.queue.qsize())]
    assert [e.id for e in got if isinstance(e, Event)] == [3, 4]


async def test_a_full_queue_drops_that_subscriber_only() -> None:
    hub = LiveHub(queue_size=2, max_subscribers=10)
    hub.bind(asyncio.get_running_loop())
    dropped: list[bool] = []
    slow = hub.subscribe("a", LiveFilter())
    slow.on_drop = lambda: dropped.append(True)
    fast = hub.subscribe("a", LiveFilter(frozenset({"turn"})))
    hub.publish(Scope("a", "c"), [event(1), event(2), event(3)])
    await asyncio.sleep(0.05)
    assert dropped == [True]
    assert slow.dropped
    assert slow.queue.get_nowait() == DROPPED
    assert hub.subscribers == 1
    assert hub.dropped_total == 1
    assert fast.queue.empty()


async def test_the_number_of_subscribers_is_bounded() -> None:
    hub = LiveHub(queue_size=2, max_subscribers=1)
    sub = hub.subscribe("a", LiveFilter())
    with pytest.raises(TooManySubscribers):
        hub.subscribe("b", LiveFilter())
    hub.unsubscribe(sub)
    hub.subscribe("b", LiveFilter())


def test_publishing_before_a_loop_is_bound_or_after_it_closed_is_harmless() -> None:
    hub = LiveHub(queue_size=2, max_subscribers=1)
    hub.publish(Scope("a", "c"), [event(1)])
    loop = asyncio.new_event_loop()
    hub.bind(loop)
    loop.close()
    hub.publish(Scope("a", "c"), [event(1)])

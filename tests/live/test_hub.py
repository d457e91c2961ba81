"""The live hub: per-agent fan-out of events as stored, filters, bounded queues, drops."""

from __future__ import annotations

import pytest

from nmafc.core.events import Event, EventKind
from nmafc.live.hub import AGENT_WIDE, DROPPED, LiveFilter, LiveHub, TooManySubscribers

pytestmark = pytest.mark.anyio


def event(i: int, kind: EventKind = EventKind.ADD, agent: str = "a", conv: str = "c") -> Event:
    return Event(kind=kind, turn=float(i), id=i, seq=i, agent_id=agent, conversation_id=conv)


def queued(sub) -> list[int]:  # type: ignore[no-untyped-def]
    return [e.id for e in (sub.queue.get_nowait() for _ in range(sub.queue.qsize()))]


async def test_events_reach_only_their_agents_subscribers() -> None:
    hub = LiveHub(queue_size=10, max_subscribers=10)
    mine = hub.subscribe("a", LiveFilter())
    theirs = hub.subscribe("b", LiveFilter())
    hub.deliver([event(1), event(2, agent="b"), event(3)])
    assert queued(mine) == [1, 3]
    assert queued(theirs) == [2]
    assert hub.agents() == ["a", "b"]


async def test_filters_pick_kinds_and_a_conversation() -> None:
    hub = LiveHub(queue_size=10, max_subscribers=10)
    sub = hub.subscribe("a", LiveFilter(frozenset({"add"}), "c1"))
    hub.deliver([event(1, conv="c2"), event(2, EventKind.TURN, conv="c1"), event(3, conv="c1")])
    hub.deliver([event(4, EventKind.ADD, conv=AGENT_WIDE)])  # an agent-wide purge reaches c1
    assert queued(sub) == [3, 4]


async def test_a_full_queue_drops_that_subscriber_only() -> None:
    hub = LiveHub(queue_size=2, max_subscribers=10)
    dropped: list[bool] = []
    slow = hub.subscribe("a", LiveFilter())
    slow.on_drop = lambda: dropped.append(True)
    fast = hub.subscribe("a", LiveFilter(frozenset({"turn"})))
    hub.deliver([event(1), event(2), event(3)])
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
    assert hub.agents() == ["b"]


async def test_an_observer_hears_every_change_of_the_counts() -> None:
    heard: list[tuple[str, int]] = []
    hub = LiveHub(queue_size=1, max_subscribers=10, observe=lambda k, n: heard.append((k, n)))
    slow = hub.subscribe("a", LiveFilter())
    other = hub.subscribe("b", LiveFilter())
    hub.deliver([event(1), event(2)])  # the second overflows a's queue
    hub.unsubscribe(slow)  # already dropped: not counted twice
    hub.unsubscribe(other)
    assert heard == [
        ("subscribers", 1), ("subscribers", 1),
        ("published", 1), ("published", 1), ("subscribers", -1), ("dropped", 1),
        ("subscribers", -1),
    ]  # fmt: skip

"""The event hub between the log tail and this process's WebSocket clients.

The tail (:mod:`nmafc.live.tail`) reads committed events from the log and calls
:meth:`LiveHub.deliver` on the event loop; each event goes into the bounded queue of
every matching subscriber of its agent. A subscriber whose queue is full is dropped — its
queue is emptied, a :data:`DROPPED` marker put in its place and its ``on_drop`` called —
because a slow reader must cost itself, never the writers (who never wait on the hub).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from nmafc.core.events import Event

log = logging.getLogger(__name__)

AGENT_WIDE = "*"  # conversation of an agent-wide purge tombstone
DROPPED: Final = "dropped"


@dataclass(frozen=True, slots=True)
class LiveFilter:
    """Which events a subscriber wants: kinds (empty: all) and one conversation (None: all)."""

    kinds: frozenset[str] = frozenset()
    conversation_id: str | None = None

    def matches(self, event: Event) -> bool:
        if self.kinds and event.kind.value not in self.kinds:
            return False
        if self.conversation_id is None:
            return True
        # An agent-wide purge erased this conversation too.
        return event.conversation_id in (self.conversation_id, AGENT_WIDE)


@dataclass(eq=False)
class Subscription:
    agent_id: str
    filter: LiveFilter
    queue: asyncio.Queue[Event | str]
    on_drop: Callable[[], None] | None = None
    dropped: bool = False
    delivered: int = field(default=0)


class TooManySubscribers(Exception):
    """The process already serves ``max_connections`` live clients."""


Observer = Callable[[str, int], None]  # ("subscribers" | "dropped" | "published", change)


class LiveHub:
    """Fan-out to this process's subscribers; ``observe`` hears every change of its counts."""

    def __init__(
        self, queue_size: int, max_subscribers: int, observe: Observer | None = None
    ) -> None:
        self.queue_size = queue_size
        self.max_subscribers = max_subscribers
        self.dropped_total = 0
        self._by_agent: dict[str, set[Subscription]] = {}
        self._observe = observe or (lambda _kind, _change: None)

    @property
    def subscribers(self) -> int:
        return sum(len(subs) for subs in self._by_agent.values())

    def agents(self) -> list[str]:
        """The agents someone is watching: the only ones whose events are read from the log."""
        return sorted(self._by_agent)

    def subscribe(self, agent_id: str, live_filter: LiveFilter) -> Subscription:
        """Register before backfilling, so nothing committed in between is missed."""
        if self.subscribers >= self.max_subscribers:
            raise TooManySubscribers
        sub = Subscription(agent_id, live_filter, asyncio.Queue(self.queue_size))
        self._by_agent.setdefault(agent_id, set()).add(sub)
        self._observe("subscribers", 1)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        subs = self._by_agent.get(sub.agent_id)
        if subs is None or sub not in subs:
            return
        subs.discard(sub)
        self._observe("subscribers", -1)
        if not subs:
            del self._by_agent[sub.agent_id]

    def deliver(self, events: Iterable[Event]) -> None:
        """Queue each event (as stored, with its agent and conversation) for its watchers."""
        for event in events:
            subs = self._by_agent.get(event.agent_id or "")
            if not subs:
                continue
            self._observe("published", 1)
            for sub in list(subs):
                if not sub.filter.matches(event):
                    continue
                try:
                    sub.queue.put_nowait(event)
                except asyncio.QueueFull:
                    self._drop(sub)

    def _drop(self, sub: Subscription) -> None:
        self.unsubscribe(sub)
        sub.dropped = True
        self.dropped_total += 1
        self._observe("dropped", 1)
        while not sub.queue.empty():
            sub.queue.get_nowait()
        sub.queue.put_nowait(DROPPED)
        log.warning("live client dropped: its queue of %d events was full", self.queue_size)
        if sub.on_drop is not None:
            sub.on_drop()

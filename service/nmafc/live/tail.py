"""Feeding the live hub from the Cold ROM's event log, so a stream sees every commit.

A write reaches the log whichever process made it: another worker of this service, or
another replica on the same PostgreSQL. :class:`LogTail` reads the log after the last id
it has seen, every ``poll_s`` seconds and at once when this process commits (``nudge``),
and hands the events of the agents someone is watching to the hub, in id order.

Ids are handed out when a row is inserted but become visible when its transaction
commits, and on PostgreSQL two writers can commit in the other order: id 11 may be read
while id 10 is still in flight. An id skipped over is therefore remembered as a gap and
looked for again on every poll for ``gap_s`` seconds; after that it is taken to be a
rolled-back insert (or one purged before it was read). SQLite commits one writer at a
time, so there ids appear in order and no gap ever fills.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Protocol

from anyio.to_thread import run_sync

from nmafc.core.events import Event
from nmafc.live.hub import LiveHub
from nmafc.storage.cold import ColdStore

log = logging.getLogger(__name__)

MAX_GAPS = 10_000  # ids awaited at most; a larger hole is not a set of in-flight commits


class EventLog(Protocol):
    def last_id(self) -> int: ...

    def ids_after(self, after_id: int, limit: int) -> list[int]: ...

    def present(self, ids: Sequence[int]) -> list[int]: ...

    def of_agents(self, agent_ids: Sequence[str], ids: Sequence[int]) -> list[Event]: ...


class ColdEventLog:
    """:class:`EventLog` over the Cold ROM, one short read transaction per call."""

    def __init__(self, cold: ColdStore) -> None:
        self.cold = cold

    def last_id(self) -> int:
        with self.cold.read() as session:
            return session.events.last_id()

    def ids_after(self, after_id: int, limit: int) -> list[int]:
        with self.cold.read() as session:
            return session.events.ids_after(after_id, limit)

    def present(self, ids: Sequence[int]) -> list[int]:
        with self.cold.read() as session:
            return session.events.present(ids)

    def of_agents(self, agent_ids: Sequence[str], ids: Sequence[int]) -> list[Event]:
        with self.cold.read() as session:
            return session.events.of_agents(agent_ids, ids)


class LogTail:
    def __init__(
        self,
        events: EventLog,
        hub: LiveHub,
        *,
        poll_s: float,
        gap_s: float,
        batch: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.events = events
        self.hub = hub
        self.poll_s = poll_s
        self.gap_s = gap_s
        self.batch = batch
        self.clock = clock
        self.last: int | None = None  # the highest id read; None until the first poll
        self.gaps: dict[int, float] = {}  # id skipped over -> when to stop looking for it
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def nudge(self) -> None:
        """Engine listener (any thread): this process committed, so read the log now."""
        loop, wake = self._loop, self._wake
        if loop is None or wake is None:
            return
        try:
            loop.call_soon_threadsafe(wake.set)
        except RuntimeError:  # the loop is closed: the process is shutting down
            pass

    async def run(self) -> None:
        """Poll until cancelled; a failed read (a store outage) is logged and retried."""
        self._loop = asyncio.get_running_loop()
        self._wake = wake = asyncio.Event()
        while True:
            wake.clear()
            try:
                await self.poll()
            except Exception as exc:
                log.warning("live tail: reading the event log failed (%s); retrying", exc)
            try:
                await asyncio.wait_for(wake.wait(), self.poll_s)
            except TimeoutError:
                pass

    async def poll(self) -> int:
        """Read what was committed since the last poll and deliver it; returns how many."""
        agents = self.hub.agents()
        events = await run_sync(self.read, agents)
        self.hub.deliver(events)
        return len(events)

    def read(self, agents: Sequence[str]) -> list[Event]:
        """The newly visible events of ``agents``, in id order (runs in a worker thread)."""
        if self.last is None:
            self.last = self.events.last_id()  # the past is for backfill, not the stream
            return []
        now = self.clock()
        visible = self._new_ids(now)
        if self.gaps:
            filled = self.events.present(list(self.gaps))
            for event_id in filled:
                del self.gaps[event_id]
            visible = sorted([*visible, *filled])
            for event_id in [i for i, until in self.gaps.items() if until <= now]:
                del self.gaps[event_id]
        if not agents:
            return []
        found: list[Event] = []
        for start in range(0, len(visible), self.batch):  # bounded statement parameters
            found += self.events.of_agents(agents, visible[start : start + self.batch])
        return found

    def _new_ids(self, now: float) -> list[int]:
        assert self.last is not None
        found: list[int] = []
        while True:
            ids = self.events.ids_after(self.last, self.batch)
            expected = self.last + 1
            for event_id in ids:
                if event_id - expected <= MAX_GAPS:
                    self.gaps.update(dict.fromkeys(range(expected, event_id), now + self.gap_s))
                expected = event_id + 1
            found += ids
            if ids:
                self.last = ids[-1]
            if len(ids) < self.batch:
                break
        if len(self.gaps) > MAX_GAPS:
            for event_id in sorted(self.gaps)[: len(self.gaps) - MAX_GAPS]:
                del self.gaps[event_id]
        return found

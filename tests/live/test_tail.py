"""The log tail: every commit to the Cold ROM's log reaches the hub, once, in id order.

Commits are made through real engines; PostgreSQL cases also make one commit while
another is still open, the out-of-order visibility the tail has to wait out.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from nmafc.core.events import Event, EventKind
from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.live import ColdEventLog, LiveFilter, LiveHub, LogTail
from nmafc.settings import Settings

from ..conftest import _Shared

A, B = Scope("agent-a", "c1"), Scope("agent-b", "c1")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def tail_of(engine: MemoryEngine, clock: Clock | None = None, poll_s: float = 60.0) -> LogTail:
    hub = LiveHub(queue_size=100, max_subscribers=10)
    return LogTail(
        ColdEventLog(engine.ctx.cold), hub, poll_s=poll_s, gap_s=5.0, clock=clock or Clock()
    )


def add(engine: MemoryEngine, scope: Scope, text: str) -> list[int]:
    """Ingest one fact; the ids of the events it logged."""
    before = {e.id for e in engine.events(scope, limit=1000)}
    engine.ingest(scope, [FactDraft(text, entity="x")])
    return [e.id for e in engine.events(scope, limit=1000) if e.id not in before]


def ids(events: list[Event]) -> list[int]:
    return [e.id for e in events]


def test_the_stream_starts_at_the_end_of_the_log(engine: MemoryEngine) -> None:
    add(engine, A, "written before the tail started")
    tail = tail_of(engine)
    assert tail.read(["agent-a"]) == []  # the past is for backfill
    new = add(engine, A, "written after")
    assert ids(tail.read(["agent-a"])) == new
    assert tail.read(["agent-a"]) == []  # each event once


def test_only_the_watched_agents_events_are_read(engine: MemoryEngine) -> None:
    tail = tail_of(engine)
    tail.read([])
    theirs = add(engine, B, "agent b's fact")
    mine = add(engine, A, "agent a's fact")
    got = tail.read(["agent-a"])
    assert ids(got) == mine
    assert {e.agent_id for e in got} == {"agent-a"}
    assert not set(theirs) & set(ids(got))
    assert tail.read(["agent-b"]) == []  # unwatched when committed: not replayed later


def test_another_engine_on_the_same_stores_is_seen(engine: MemoryEngine, settings: Settings,
                                                    embedder: object) -> None:  # fmt: skip
    tail = tail_of(engine)
    tail.read([])
    other = MemoryEngine.open(settings, embedder=_Shared(embedder))  # type: ignore[arg-type]
    try:
        theirs = add(other, A, "written by another process or replica")
    finally:
        other.close()
    assert ids(tail.read(["agent-a"])) == theirs


@pytest.mark.anyio
async def test_a_local_commit_is_read_at_once_not_at_the_next_poll(engine: MemoryEngine) -> None:
    tail = tail_of(engine, poll_s=3600.0)
    engine.subscribe(lambda _scope, _events: tail.nudge())
    sub = tail.hub.subscribe("agent-a", LiveFilter(frozenset({EventKind.ADD.value})))
    async with anyio.create_task_group() as group:
        group.start_soon(tail.run)
        while tail.last is None:
            await anyio.sleep(0.01)
        await anyio.to_thread.run_sync(add, engine, A, "a fact")
        with anyio.fail_after(10):
            got = await sub.queue.get()
        group.cancel_scope.cancel()
    assert isinstance(got, Event)
    assert got.kind is EventKind.ADD


# -- PostgreSQL: a later id can commit first ---------------------------------------------


@pytest.fixture
def pg_engine(tmp_path: Path, postgres_uri: str, embedder: object) -> Iterator[MemoryEngine]:
    settings = Settings(
        data_dir=tmp_path,
        cold={"uri": postgres_uri},  # type: ignore[arg-type]
        consolidation={"inline": False},  # type: ignore[arg-type]
        extractor="verbatim",
    )
    opened = MemoryEngine.open(settings, embedder=_Shared(embedder))  # type: ignore[arg-type]
    yield opened
    opened.close()


def _held_open(engine: MemoryEngine, started: threading.Event, release: threading.Event,
               commit: bool) -> None:  # fmt: skip
    """Append one event for A in a transaction that stays open until ``release``."""
    try:
        with engine.ctx.cold.write() as session:
            row = session.scopes.lock(A)
            session.events.append(row, [Event(kind=EventKind.TURN, turn=1.0)])
            started.set()
            release.wait(10)
            if not commit:
                raise RuntimeError("roll back")
    except RuntimeError:
        pass


def _with_open_write(
    engine: MemoryEngine, commit: bool
) -> tuple[threading.Thread, threading.Event]:
    started, release = threading.Event(), threading.Event()
    writer = threading.Thread(target=_held_open, args=(engine, started, release, commit))
    writer.start()
    assert started.wait(10)
    return writer, release


@pytest.mark.postgres
def test_an_event_that_commits_after_a_later_one_is_still_delivered(
    pg_engine: MemoryEngine,
) -> None:
    tail = tail_of(pg_engine)
    tail.read([])
    writer, release = _with_open_write(pg_engine, commit=True)
    later = add(pg_engine, Scope("agent-a", "c2"), "committed first")
    assert ids(tail.read(["agent-a"])) == later
    assert tail.gaps  # the open transaction's id was skipped over
    release.set()
    writer.join()
    late = tail.read(["agent-a"])
    assert [e.kind for e in late] == [EventKind.TURN]
    assert late[0].id < later[0]
    assert not tail.gaps


@pytest.mark.postgres
def test_an_id_that_never_commits_is_awaited_for_gap_s_only(pg_engine: MemoryEngine) -> None:
    clock = Clock()
    tail = tail_of(pg_engine, clock)
    tail.read([])
    writer, release = _with_open_write(pg_engine, commit=False)
    add(pg_engine, Scope("agent-a", "c2"), "committed")
    tail.read(["agent-a"])
    release.set()
    writer.join()  # rolled back: its id stays a hole for good
    assert tail.gaps
    clock.now = 4.0
    assert tail.read(["agent-a"]) == []
    assert tail.gaps
    clock.now = 5.0
    assert tail.read(["agent-a"]) == []
    assert not tail.gaps

"""Small builders for engine tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from nmafc.core.events import fold
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import Scope
from nmafc.core.turns import Message
from nmafc.engine.engine import MemoryEngine

START = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def say(text: str, speaker: str = "Caroline", minutes: int = 0) -> Message:
    return Message(
        text, role="user", speaker=speaker, occurred_at=START + timedelta(minutes=minutes)
    )


def log_state(engine: MemoryEngine, scope: Scope) -> dict[str, MemoryRecord]:
    """The working set obtained by folding the scope's whole log."""
    with engine.ctx.cold.read() as session:
        return fold(session.events.since(scope, 0))


def hot_state(engine: MemoryEngine, scope: Scope) -> dict[str, MemoryRecord]:
    """The working set as persisted in the LanceDB table."""
    return {r.id: r for r in engine.ctx.hot.store.load(scope).records}


def cold_state(engine: MemoryEngine, scope: Scope) -> dict[str, MemoryRecord]:
    with engine.ctx.cold.read() as session:
        return {r.id: r for r in session.facts.valid(scope)}


def assert_consistent(engine: MemoryEngine, scope: Scope) -> None:
    """Log fold == Cold projection == LanceDB rows (once flushed) == RAM working set."""
    engine.flush()
    expected = log_state(engine, scope)
    assert cold_state(engine, scope) == expected
    assert hot_state(engine, scope) == expected
    assert engine.working_set(scope) == expected


def let_turns_pass(engine: MemoryEngine, scope: Scope, turns: int) -> None:
    """Move the scope clock forward without adding facts (decay tests)."""
    with engine.ctx.cold.write() as session:
        row = session.scopes.lock(scope)
        session.scopes.advance(row, turn=row.turn + turns, seq=row.seq)

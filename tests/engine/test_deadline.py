"""A deadline stops a write before it commits and a recall between its steps."""

from __future__ import annotations

import threading
import time

import pytest

from nmafc import deadline
from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.errors import RequestTimeout

from .helpers import cold_state, say


def test_outside_a_deadline_check_never_raises() -> None:
    deadline.check("anywhere")
    assert deadline.remaining() is None


def test_a_write_that_waited_past_its_deadline_is_not_committed(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("I live in Lisbon.")])
    before = cold_state(engine, scope)
    failed: list[BaseException] = []

    def late_write() -> None:
        with deadline.within(0.2):
            try:
                engine.remember(scope, [say("I moved to Porto.")])
            except RequestTimeout as exc:
                failed.append(exc)

    # Another writer holds the conversation: this write starts in time, then waits past
    # its deadline for the lock, builds its change set, and must stop before it commits.
    with engine.ctx.locks.hold(scope):
        writer = threading.Thread(target=late_write)
        writer.start()
        time.sleep(0.6)
    writer.join(10)
    assert failed, "the write committed after its deadline"
    assert "before the write committed" in failed[0].detail
    assert cold_state(engine, scope) == before
    assert engine.stats(scope).turns == 1
    assert engine.working_set(scope) == before


def test_a_recall_past_its_deadline_stops_with_request_timeout(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("I live in Lisbon.")])
    with deadline.within(1e-9), pytest.raises(RequestTimeout) as raised:
        engine.recall(scope, "Where do I live?", RecallOptions())
    assert raised.value.fix
    assert engine.recall(scope, "Where do I live?", RecallOptions()).hits

"""Background scope loads: once per scope, a bounded pool, outside the asker's context."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from nmafc import deadline
from nmafc.core.scope import Scope
from nmafc.engine.scope_loads import ScopeLoads

A, B, C = (Scope("agent", c) for c in ("a", "b", "c"))


def _until(condition: object, timeout_s: float = 10.0) -> bool:
    ends = time.monotonic() + timeout_s
    while time.monotonic() < ends:
        if callable(condition) and condition():
            return True
        time.sleep(0.01)
    return False


def test_a_scope_is_loaded_once_however_often_it_is_asked_for() -> None:
    release = threading.Event()
    loaded: list[Scope] = []

    def load(scope: Scope) -> None:
        release.wait(10)
        loaded.append(scope)

    loads = ScopeLoads(load, workers=1)
    try:
        assert loads.start(A)
        assert _until(lambda: loads.pending(A))
        assert not loads.start(A)  # loading: not queued again
        assert loads.start(B)
        assert not loads.start(B)  # queued: not queued twice
        release.set()
        assert _until(lambda: len(loaded) == 2 and not loads.pending(B))
        assert loaded == [A, B]
        assert loads.start(A)  # done: a later search may ask again
    finally:
        loads.close()


def test_the_pool_and_its_queue_are_bounded() -> None:
    release = threading.Event()
    running = threading.Semaphore(0)

    def load(_: Scope) -> None:
        running.release()
        release.wait(10)

    loads = ScopeLoads(load, workers=1, max_queued=1)
    try:
        assert loads.start(A)
        assert running.acquire(timeout=10)  # A runs, alone
        assert loads.start(B)  # queued
        assert not loads.start(C)  # the queue is full: C's next search asks again
        assert not running.acquire(timeout=0.2)  # one worker: B waits for A
        release.set()
        assert running.acquire(timeout=10)  # then B runs
    finally:
        release.set()
        loads.close()


def test_a_load_runs_outside_the_deadline_and_context_of_the_request_that_asked() -> None:
    seen: list[float | None] = []
    done = threading.Event()

    def load(_: Scope) -> None:
        seen.append(deadline.remaining())
        deadline.check("in a background load")  # would raise with the request's deadline
        done.set()

    loads = ScopeLoads(load)
    try:
        stop = threading.Event()
        stop.set()  # as at shutdown: a request's work stops at its next check
        with deadline.within(1e-9, stop=stop):
            assert loads.start(A)
        assert done.wait(10)
        assert seen == [None]
    finally:
        loads.close()


def test_a_failed_load_is_logged_not_raised_and_the_scope_can_be_asked_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    attempts: list[Scope] = []

    def load(scope: Scope) -> None:
        attempts.append(scope)
        if len(attempts) == 1:
            raise OSError("the store went away")

    loads = ScopeLoads(load)
    try:
        with caplog.at_level(logging.WARNING, logger="nmafc.engine.scope_loads"):
            assert loads.start(A)
            assert _until(lambda: loads.failures == 1 and not loads.pending(A))
        assert "background load of" in caplog.text
        assert "the store went away" in caplog.text
        assert loads.start(A)
        assert _until(lambda: len(attempts) == 2 and not loads.pending(A))
        assert loads.failures == 1
    finally:
        loads.close()


def test_close_drops_the_queue_and_does_not_wait_long_for_a_running_load() -> None:
    release = threading.Event()
    started = threading.Event()
    loaded: list[Scope] = []

    def load(scope: Scope) -> None:
        started.set()
        release.wait(30)  # a load of a huge scope from a slow store
        loaded.append(scope)

    loads = ScopeLoads(load, workers=1)
    assert loads.start(A)
    assert started.wait(10)
    assert loads.start(B)
    began = time.monotonic()
    loads.close(timeout_s=0.2)
    assert time.monotonic() - began < 2.0
    assert not loads.start(C)  # closed
    release.set()
    assert _until(lambda: loaded == [A])
    time.sleep(0.1)
    assert loaded == [A]  # B, queued at close, never ran

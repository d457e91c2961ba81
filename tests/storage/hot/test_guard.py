"""The Hot guard: a deadline per call, a breaker, and late calls handed back to the caller."""

from __future__ import annotations

import threading

import pytest

from nmafc.errors import StoreUnavailable
from nmafc.storage.hot.guard import HotGuard

from ...polling import wait_until


def test_a_call_that_misses_its_deadline_is_unavailable_and_handed_back_still_running() -> None:
    guard = HotGuard(timeout_s=0.05, cooldown_s=0.1)
    release = threading.Event()
    with pytest.raises(StoreUnavailable, match="NMAFC_HOT_S3_ENDPOINT") as caught:
        guard.call(lambda: release.wait(10) and "committed late")
    running = caught.value.running
    assert running is not None
    assert not running.done()  # it cannot be cancelled: whoever made it must watch it
    assert guard.open
    release.set()
    assert running.result(timeout=5) == "committed late"
    guard.close(wait=True)


def test_the_breaker_closes_after_the_cooldown_even_while_a_late_call_still_runs() -> None:
    # Calls stuck on a dead server's connections can hang for minutes after it is back;
    # waiting for them would keep Hot down that long.
    guard = HotGuard(timeout_s=0.05, cooldown_s=0.1)
    stuck = threading.Event()
    with pytest.raises(StoreUnavailable) as caught:
        guard.call(stuck.wait, 10)
    with pytest.raises(StoreUnavailable, match="not answering"):
        guard.call(lambda: "too early")
    wait_until(lambda: not guard.open)
    assert guard.call(lambda: "answered") == "answered"
    running = caught.value.running
    assert running is not None
    assert not running.done()
    stuck.set()
    guard.close(wait=True)
    assert running.done()


def test_a_failing_call_trips_the_breaker_and_hands_back_nothing() -> None:
    guard = HotGuard(timeout_s=1.0, cooldown_s=0.1)

    def fails() -> None:
        raise OSError("connection refused")

    with pytest.raises(OSError, match="refused"):
        guard.call(fails)
    with pytest.raises(StoreUnavailable) as caught:
        guard.call(fails)
    assert caught.value.running is None  # refused by the open breaker: nothing ran
    wait_until(lambda: not guard.open)
    assert guard.call(lambda: 1) == 1
    guard.close()


def test_calls_still_stuck_on_a_dead_server_never_hold_up_a_new_call() -> None:
    # Each call abandoned at its deadline keeps running until the dead connection gives up.
    # Queued behind them, a new call would miss its deadline too, and Hot would stay down
    # long after S3 is back.
    guard = HotGuard(timeout_s=0.05, cooldown_s=0.01)
    stuck = threading.Event()
    for _ in range(20):
        wait_until(lambda: not guard.open)
        with pytest.raises(StoreUnavailable):
            guard.call(stuck.wait, 10)
    assert guard.stuck == 20
    wait_until(lambda: not guard.open)
    assert guard.call(lambda: "answered") == "answered"
    stuck.set()
    guard.close(wait=True)
    assert guard.stuck == 0


def test_past_its_bound_of_stuck_calls_the_guard_refuses_at_once_and_says_why() -> None:
    guard = HotGuard(timeout_s=0.05, cooldown_s=0.01, max_stuck=2)
    stuck = threading.Event()
    for _ in range(2):
        wait_until(lambda: not guard.open)
        with pytest.raises(StoreUnavailable):
            guard.call(stuck.wait, 10)
    wait_until(lambda: not guard.open)
    with pytest.raises(StoreUnavailable, match="2 calls stuck") as caught:
        guard.call(lambda: "never run")
    assert caught.value.running is None
    stuck.set()
    wait_until(lambda: guard.stuck == 0)
    assert guard.call(lambda: "answered") == "answered"
    guard.close(wait=True)

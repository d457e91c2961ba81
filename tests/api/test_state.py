"""Searches run in a bounded pool, in arrival order, with the request's context."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from nmafc.api.state import RecallThreads

request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def _blocking_searches(size: int, calls: int) -> tuple[list[int], list[int], int]:
    """Results, start order and peak concurrency of ``calls`` searches that wait for a go."""
    threads = RecallThreads(size)
    go = threading.Event()
    lock = threading.Lock()
    running, most, started = 0, 0, []

    def search(n: int) -> int:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
            started.append(n)
        go.wait(5)
        with lock:
            running -= 1
        return n * 10

    async def scenario() -> list[int]:
        pending = [asyncio.ensure_future(threads.run(lambda n=n: search(n))) for n in range(calls)]
        await asyncio.sleep(0.2)
        assert len(started) == min(size, calls)  # the rest are waiting
        go.set()
        return list(await asyncio.gather(*pending))

    try:
        results = asyncio.run(scenario())
    finally:
        threads.close()
    return results, started, most


def test_at_most_size_searches_run_at_once() -> None:
    results, _, most = _blocking_searches(size=2, calls=6)
    assert results == [0, 10, 20, 30, 40, 50]
    assert most == 2


def test_waiting_searches_start_in_arrival_order() -> None:
    _, started, _ = _blocking_searches(size=1, calls=6)
    assert started == [0, 1, 2, 3, 4, 5]


def test_the_callers_context_goes_with_the_call() -> None:
    threads = RecallThreads(1)

    async def scenario() -> str:
        request_id.set("req-42")
        return await threads.run(request_id.get)

    try:
        assert asyncio.run(scenario()) == "req-42"
    finally:
        threads.close()


def test_an_error_reaches_the_caller_and_after_close_nothing_runs() -> None:
    threads = RecallThreads(1)

    def fails() -> None:
        raise ValueError("bad query")

    with pytest.raises(ValueError, match="bad query"):
        asyncio.run(threads.run(fails))
    threads.close()
    with pytest.raises(RuntimeError):
        asyncio.run(threads.run(lambda: 1))

"""Concurrent calls share batches; each caller gets its own result or its batch's error."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from nmafc.engine.coalesce import Coalescer, CoalescerClosed

from ..polling import wait_until


class Squares:
    """A batch function that records its batches; the first one can be held on an event."""

    def __init__(self, fail_on: int | None = None, always_fail: bool = False) -> None:
        self.batches: list[list[int]] = []
        self.first_started = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.fail_on = fail_on
        self.always_fail = always_fail
        self._lock = threading.Lock()

    def __call__(self, items: list[int]) -> list[int]:
        with self._lock:
            self.batches.append(list(items))
            first = len(self.batches) == 1
        if first:
            self.first_started.set()
            assert self.release.wait(10)
        if self.always_fail or (self.fail_on is not None and self.fail_on in items):
            raise ValueError(f"bad batch {items}")
        return [x * x for x in items]


def _queued_behind_a_held_batch(
    coalescer: Coalescer[int, int], squares: Squares, items: list[int]
) -> list[Future[int]]:
    """Start one call and hold its batch, queue ``items[1:]`` behind it, then let go."""
    squares.release.clear()
    pool = ThreadPoolExecutor(max_workers=len(items))
    futures = [pool.submit(coalescer.call, items[0])]
    assert squares.first_started.wait(10)
    futures += [pool.submit(coalescer.call, item) for item in items[1:]]
    wait_until(lambda: coalescer.pending == len(items) - 1)
    squares.release.set()
    pool.shutdown(wait=True)
    return futures


def test_each_caller_gets_the_result_of_its_own_item() -> None:
    squares = Squares()
    coalescer = Coalescer(squares, max_batch=8)
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(coalescer.call, range(200)))
    assert results == [x * x for x in range(200)]
    assert sum(len(b) for b in squares.batches) == 200


def test_callers_released_together_share_batches() -> None:
    squares = Squares()
    coalescer = Coalescer(squares, max_batch=16)
    n = 12
    barrier = threading.Barrier(n)
    squares.release.clear()

    def call(item: int) -> int:
        barrier.wait()
        return coalescer.call(item)

    with ThreadPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(call, i) for i in range(n)]
        assert squares.first_started.wait(10)  # one caller leads, its batch is held
        wait_until(lambda: coalescer.pending == n - 1)  # every other caller queued behind it
        squares.release.set()
        results = [f.result(10) for f in futures]
    assert results == [i * i for i in range(n)]
    assert [len(b) for b in squares.batches] == [1, n - 1]
    assert (coalescer.calls, coalescer.batches) == (n, 2)


def test_the_batch_size_never_exceeds_the_maximum() -> None:
    squares = Squares()
    coalescer = Coalescer(squares, max_batch=3)
    futures = _queued_behind_a_held_batch(coalescer, squares, list(range(11)))
    assert [f.result() for f in futures] == [i * i for i in range(11)]
    assert [len(b) for b in squares.batches] == [1, 3, 3, 3, 1]
    assert sorted(x for b in squares.batches for x in b) == list(range(11))


def test_a_failed_batch_raises_in_every_caller_of_that_batch() -> None:
    squares = Squares(always_fail=True)
    coalescer = Coalescer(squares, max_batch=16)
    futures = _queued_behind_a_held_batch(coalescer, squares, list(range(6)))
    for future in futures:
        with pytest.raises(ValueError, match="bad batch"):
            future.result()
    assert [len(b) for b in squares.batches] == [1, 5]  # not re-run item by item


def test_a_batch_returning_the_wrong_number_of_results_fails_its_callers() -> None:
    coalescer: Coalescer[int, int] = Coalescer(lambda items: items[:-1], max_batch=4)
    with pytest.raises(RuntimeError, match="0 results for 1 items"):
        coalescer.call(1)


def test_many_sequential_calls_each_run_alone_and_never_hang() -> None:
    squares = Squares()
    coalescer = Coalescer(squares, max_batch=16)
    for i in range(2000):
        assert coalescer.call(i) == i * i
    assert coalescer.batches == 2000
    assert coalescer.pending == 0


def test_it_still_works_after_a_failed_batch() -> None:
    squares = Squares(fail_on=1)
    coalescer = Coalescer(squares, max_batch=4)
    with pytest.raises(ValueError, match="bad batch"):
        coalescer.call(1)
    assert coalescer.call(2) == 4


def test_a_maximum_of_one_runs_calls_directly_and_concurrently() -> None:
    both_inside = threading.Barrier(2, timeout=10)

    def meet(items: list[int]) -> list[int]:
        both_inside.wait()  # only passes if the two calls run at the same time
        return items

    coalescer = Coalescer(meet, max_batch=1)
    with ThreadPoolExecutor(max_workers=2) as pool:
        assert list(pool.map(coalescer.call, [1, 2])) == [1, 2]


def test_close_refuses_new_calls_and_lets_queued_ones_finish() -> None:
    squares = Squares()
    coalescer = Coalescer(squares, max_batch=8)
    squares.release.clear()
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(coalescer.call, 0)]
        assert squares.first_started.wait(10)
        futures += [pool.submit(coalescer.call, i) for i in (1, 2, 3)]
        wait_until(lambda: coalescer.pending == 3)
        coalescer.close()
        coalescer.close()
        squares.release.set()
        assert [f.result(10) for f in futures] == [0, 1, 4, 9]
    with pytest.raises(CoalescerClosed):
        coalescer.call(5)
    direct = Coalescer(squares, max_batch=1)
    direct.close()
    with pytest.raises(CoalescerClosed):
        direct.call(1)

"""Opportunistic batching: calls that arrive while a batch runs share the next one.

:class:`Coalescer` turns a batch function ``list[T] -> list[R]`` into a per-item
``call(item) -> R`` that many threads may use at once. There is no timer: a caller that
finds nothing running runs its own item at once (an idle service pays nothing), and
callers that arrive while a batch runs queue up and are all taken by the next batch.

Who runs a batch: the callers themselves, never a dedicated thread. The first caller to
find the coalescer idle becomes the leader and runs the batch of everything queued (itself
first); when it is done it hands the lead to the oldest caller still queued, which runs
the next batch, and returns. So one batch runs at a time, a caller only ever runs a batch
it belongs to, and an idle call costs no thread hand-off (a dedicated thread would add a
wake-up to every call, and a thread to start and stop with the engine).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class CoalescerClosed(RuntimeError):
    """``call`` after ``close``."""


class _Latch:
    """A one-shot wake-up: ``wait`` blocks until ``set``. Each ``set`` follows a ``wait`` or
    is the last, as the coalescer uses it: a slot is set for the lead, which it waits for,
    and once for its outcome.

    A bare lock rather than ``threading.Event``: an Event is a Condition written in Python,
    and its set and wait run a dozen bytecodes under the GIL on every recall's two stages.
    """

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def set(self) -> None:
        self._lock.release()

    def wait(self) -> None:
        self._lock.acquire()


class _Slot(Generic[T, R]):
    """One caller's item and, once its batch ran, its outcome (or the lead)."""

    __slots__ = ("item", "ready", "result", "error", "lead")

    def __init__(self, item: T) -> None:
        self.item = item
        self.ready = _Latch()
        self.result: R | None = None
        self.error: BaseException | None = None
        self.lead = False

    def outcome(self) -> R:
        if self.error is not None:
            raise self.error
        return self.result  # type: ignore[return-value]  # set with the batch's results


class Coalescer(Generic[T, R]):
    """Run ``batch(items)`` for the items of concurrent ``call``s, at most ``max_batch`` at a time.

    ``batch`` must return one result per item, in order. If it raises, every caller of that
    batch gets the exception (a batch that can fail for one item alone returns that item's
    failure as its result instead, as recall's scans do). ``max_batch=1`` calls ``batch``
    directly in each caller's thread, concurrently, exactly as without a coalescer.
    """

    def __init__(self, batch: Callable[[list[T]], list[R]], max_batch: int) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._batch = batch
        self.max_batch = max_batch
        self._lock = threading.Lock()
        self._queue: deque[_Slot[T, R]] = deque()
        self._running = False  # invariant: a non-empty queue has a leader running or woken
        self._closed = False
        self.calls = 0
        self.batches = 0

    @property
    def pending(self) -> int:
        """Calls queued for a batch that has not started yet."""
        with self._lock:
            return len(self._queue)

    def call(self, item: T) -> R:
        """``batch([item, ...])``'s result for ``item``; blocks until its batch has run."""
        if self.max_batch == 1:
            if self._closed:
                raise CoalescerClosed("the coalescer is closed")
            return self._checked([item])[0]
        slot: _Slot[T, R] = _Slot(item)
        with self._lock:
            if self._closed:
                raise CoalescerClosed("the coalescer is closed")
            self._queue.append(slot)
            lead = not self._running
            self._running = True
        if not lead:
            slot.ready.wait()  # woken with an outcome, or to lead the next batch
            lead = slot.lead
        if lead:
            self._run_one_batch()
        return slot.outcome()

    def close(self) -> None:
        """Refuse new calls; calls already queued still run. Idempotent."""
        with self._lock:
            self._closed = True

    def _run_one_batch(self) -> None:
        with self._lock:
            taken = [self._queue.popleft() for _ in range(min(self.max_batch, len(self._queue)))]
            self.calls += len(taken)
            self.batches += 1
        outcomes = self._outcomes([slot.item for slot in taken])  # never raises
        with self._lock:  # hand the lead on before delivering, so the next batch starts
            if self._queue:
                successor = self._queue[0]
                successor.lead = True
                successor.ready.set()
            else:
                self._running = False
        for slot, (result, error) in zip(taken, outcomes, strict=True):
            slot.result, slot.error = result, error
            slot.ready.set()

    def _outcomes(self, items: list[T]) -> list[tuple[R | None, BaseException | None]]:
        try:
            return [(result, None) for result in self._checked(items)]
        except BaseException as exc:  # e.g. KeyboardInterrupt too: still release every waiter
            return [(None, exc)] * len(items)

    def _checked(self, items: list[T]) -> list[R]:
        results = self._batch(items)
        if len(results) != len(items):
            raise RuntimeError(f"batch returned {len(results)} results for {len(items)} items")
        return results

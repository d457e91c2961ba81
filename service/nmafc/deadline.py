"""A request's deadline, carried by a context variable and checked cooperatively.

The HTTP layer opens ``within(seconds)`` around a search or a write; the work it calls
(in worker threads too: ``anyio.to_thread`` and the recall threads copy the context) calls
``check()`` between its steps — before each conversation's working set is loaded, between
embedding batches, before a write commits — and stops there with
:class:`~nmafc.errors.RequestTimeout` once the deadline has passed. Nothing is killed
mid-step, so a write either commits whole before its deadline or not at all. Outside any
``within`` (the library, background services) ``check()`` never raises.

``within(…, stop=event)`` also stops the work once ``event`` is set: the service sets it at
shutdown, so it stops within seconds of SIGTERM instead of waiting for a long search or
write in a thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from nmafc.errors import RequestTimeout


@dataclass(frozen=True, slots=True)
class _Limit:
    at: float  # time.monotonic() value
    stop: threading.Event | None


_limit: ContextVar[_Limit | None] = ContextVar("nmafc_deadline", default=None)


@contextmanager
def within(seconds: float | None, stop: threading.Event | None = None) -> Iterator[None]:
    """Work done inside (and in threads started from inside) must end in ``seconds``."""
    if seconds is None:
        yield
        return
    token = _limit.set(_Limit(time.monotonic() + seconds, stop))
    try:
        yield
    finally:
        _limit.reset(token)


def remaining() -> float | None:
    """Seconds left before the deadline (negative once past); None without one."""
    limit = _limit.get()
    return None if limit is None else limit.at - time.monotonic()


def check(step: str) -> None:
    """Raise :class:`RequestTimeout` if the deadline has passed; ``step`` names where."""
    limit = _limit.get()
    if limit is None:
        return
    if limit.stop is not None and limit.stop.is_set():
        raise RequestTimeout(f"The server is shutting down ({step}); the work was stopped.")
    if time.monotonic() >= limit.at:
        raise RequestTimeout(f"The request ran out of time ({step}); its work was stopped.")

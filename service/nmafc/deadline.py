"""A request's deadline, carried by a context variable and checked cooperatively.

The HTTP layer opens ``within(seconds)`` around a search or a write; the work it calls
(in worker threads too: ``anyio.to_thread`` and the recall threads copy the context) calls
``check()`` between its steps — before each conversation's working set is loaded, between
embedding batches, before a write commits — and stops there with
:class:`~nmafc.errors.RequestTimeout` once the deadline has passed. Nothing is killed
mid-step, so a write either commits whole before its deadline or not at all. Outside any
``within`` (the library, background services) ``check()`` never raises.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from nmafc.errors import RequestTimeout

_deadline: ContextVar[float | None] = ContextVar("nmafc_deadline", default=None)


@contextmanager
def within(seconds: float | None) -> Iterator[None]:
    """Work done inside (and in threads started from inside) must end in ``seconds``."""
    if seconds is None:
        yield
        return
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    """Seconds left before the deadline (negative once past); None without one."""
    deadline = _deadline.get()
    return None if deadline is None else deadline - time.monotonic()


def check(step: str) -> None:
    """Raise :class:`RequestTimeout` if the deadline has passed; ``step`` names where."""
    left = remaining()
    if left is not None and left <= 0:
        raise RequestTimeout(f"The request ran out of time ({step}); its work was stopped.")

"""The typed lifespan state: everything a request may reach, created once per app."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from nmafc.api.limits import Admission
from nmafc.api.metrics import Metrics
from nmafc.auth import Authenticator
from nmafc.engine.engine import MemoryEngine
from nmafc.live.hub import LiveHub
from nmafc.providers.base import ChatProvider
from nmafc.services.base import Service
from nmafc.settings import Settings

T = TypeVar("T")


class RecallThreads:
    """Searches run here, at most ``size`` at once; the rest wait their turn in arrival order.

    A thread pool of our own rather than anyio's worker threads behind a capacity limiter:
    anyio hands work over through a Python ``Queue`` and ``Condition`` on the event loop's
    thread, and the loop pays for that with the GIL every running search also wants. With
    the executor's C queue, two workers over 1,000 scopes served 2-10 % more searches/s
    (three alternating pairs). The caller's context variables (the request id of log
    lines) go with the call, as with anyio.
    """

    def __init__(self, size: int) -> None:
        self._pool = ThreadPoolExecutor(size, thread_name_prefix="nmafc-recall")

    async def run(self, call: Callable[[], T]) -> T:
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(context.run, call))

    def close(self) -> None:
        """Drop searches not yet started, wait for those running."""
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass(frozen=True, slots=True)
class AppState:
    settings: Settings
    engine: MemoryEngine
    auth: Authenticator
    hub: LiveHub
    metrics: Metrics
    services: tuple[Service, ...]
    recall_threads: RecallThreads
    admission: Admission
    provider: ChatProvider | None = None  # the upstream LLM, when one is configured

"""The upstream HTTP client every httpx provider shares: rate limit, concurrency, retries.

A call waits for a token (``requests_per_minute``, a token bucket) and a slot
(``max_concurrency``), then sends. A 429, a 5xx, a timeout or a refused connection is
retried up to ``max_retries`` times with exponential backoff, or after the upstream's
``Retry-After`` when it says one; a ``Retry-After`` longer than ``retry_max_wait_s`` is not
waited for here but handed back to the caller as our own 429 with that ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from nmafc.errors import ProviderError
from nmafc.providers.base import status_error, transport_error, upstream_message
from nmafc.settings.llm import LlmSettings

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
BACKOFF_BASE_S = 0.25


class TokenBucket:
    """At most ``per_minute`` acquisitions a minute, with bursts up to one second's worth."""

    def __init__(self, per_minute: float) -> None:
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self._tokens = self.capacity
        self._updated = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        if self.rate <= 0:
            return
        async with self._lock:  # one waiter refills at a time, so waits queue fairly
            while True:
                now = time.monotonic()
                self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
                self._updated = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    return
                await asyncio.sleep((1 - self._tokens) / self.rate)


def retry_after_s(headers: Mapping[str, str]) -> float | None:
    """``Retry-After`` (seconds or an HTTP date), or OpenAI's ``retry-after-ms``, in seconds."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class Upstream:
    """One provider's connection pool plus the retry and rate-limit policy."""

    def __init__(
        self,
        provider: str,
        settings: LlmSettings,
        *,
        base_url: str,
        headers: Mapping[str, str],
        params: Mapping[str, str] | None = None,
    ) -> None:
        self.provider = provider
        self.settings = settings
        timeout = httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s)
        self.client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=dict(headers),
            params=dict(params or {}),
            timeout=timeout,
            limits=httpx.Limits(max_connections=settings.max_concurrency),
        )
        self._bucket = TokenBucket(settings.requests_per_minute)
        self._slots = asyncio.Semaphore(settings.max_concurrency)

    async def request(
        self, method: str, path: str, *, json: Any = None, stream: bool = False
    ) -> httpx.Response:
        """A 2xx response (for ``stream``, still open: the caller must ``aclose`` it)."""
        attempt = 0
        while True:
            outcome = await self._attempt(method, path, json, stream)
            if isinstance(outcome, httpx.Response):
                return outcome
            error, retryable, after = outcome
            if not retryable or attempt >= self.settings.max_retries:
                raise error
            # Exponential backoff with jitter, unless the upstream said how long to wait.
            wait = after if after is not None else BACKOFF_BASE_S * 2**attempt
            attempt += 1
            await asyncio.sleep(min(self.settings.retry_max_wait_s, wait * random.uniform(1, 1.5)))

    async def _attempt(
        self, method: str, path: str, body: Any, stream: bool
    ) -> httpx.Response | tuple[ProviderError, bool, float | None]:
        """The response, or the error, whether to retry it and the upstream's Retry-After."""
        await self._bucket.acquire()
        async with self._slots:
            try:
                request = self.client.build_request(method, path, json=body)
                response = await self.client.send(request, stream=stream)
            except httpx.HTTPError as exc:
                return transport_error(self.provider, exc), True, None
            if response.is_success:
                return response
            content = await response.aread()
            await response.aclose()
        after = retry_after_s(response.headers)
        error = status_error(self.provider, response.status_code, upstream_message(content), after)
        if response.status_code not in RETRY_STATUSES:
            return error, False, None
        if after is not None and after > self.settings.retry_max_wait_s:
            # Waiting that long would hold the caller's request open: let the caller decide.
            return error, False, after
        return error, True, after

    async def aclose(self) -> None:
        await self.client.aclose()

"""The provider interface, and the mapping of upstream failures to NMAFC's error types."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Protocol

import httpx

from nmafc.errors import ProviderError, ProviderRateLimited, ProviderTimeout

Json = dict[str, Any]
Chunk = dict[str, Any]
MAX_MESSAGE_CHARS = 1000


class ChatProvider(Protocol):
    """One upstream LLM. Every shape in and out is OpenAI Chat Completions JSON."""

    name: str
    default_model: str | None

    async def complete(self, request: Json) -> Json:
        """A ``chat.completion`` object for a non-streaming request."""
        ...

    async def stream(self, request: Json) -> AsyncIterator[Chunk]:
        """Connect (retrying as needed), then yield ``chat.completion.chunk`` objects.

        Awaiting this raises the upstream's error before any chunk exists, so the caller
        can still answer with a status; errors after the first chunk surface from the
        iterator.
        """
        ...

    async def models(self) -> Json:
        """The upstream's models as an OpenAI ``list`` object."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


def upstream_message(body: bytes | str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """The provider's own error message: ``error.message`` (OpenAI, Anthropic) or the text."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:limit] or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])[:limit]
        if isinstance(error, str):
            return error[:limit]
        if isinstance(data.get("message"), str):
            return str(data["message"])[:limit]
    return text.strip()[:limit]


def status_error(
    provider: str, status: int, message: str, retry_after_s: float | None = None
) -> ProviderError:
    """The NMAFC error for an upstream HTTP status: 429 stays 429, timeouts 504, else 502."""
    detail = f"{provider} answered {status}: {message}"
    if status == 429:
        return ProviderRateLimited(detail, upstream_status=status, retry_after_s=retry_after_s)
    if status in (408, 504):
        return ProviderTimeout(detail, upstream_status=status)
    return ProviderError(detail, upstream_status=status, retry_after_s=None)


def transport_error(provider: str, exc: Exception) -> ProviderError:
    """The NMAFC error for a failure to get an answer at all (timeout, refused, reset)."""
    if isinstance(exc, httpx.TimeoutException):
        return ProviderTimeout(f"{provider} did not answer in time ({type(exc).__name__}).")
    return ProviderError(
        f"Cannot reach {provider}: {type(exc).__name__}: {exc}",
        fix="Check NMAFC_LLM_BASE_URL and that the upstream is running and reachable.",
    )


def error_chunk(error: ProviderError) -> Json:
    """How an error after the first chunk reaches a streaming client (the OpenAI shape).

    OpenAI's SDKs raise with ``error.message`` as the text, so it ends with the fix.
    """
    return {
        "error": {
            "message": str(error),
            "type": "rate_limit_error" if error.status == 429 else "server_error",
            "param": None,
            "code": error.code,
            "fix": error.fix,
        }
    }

"""Any OpenAI-compatible endpoint: OpenAI, Azure OpenAI, Groq, OpenRouter, Together, Ollama,
LM Studio, vLLM. Requests and replies pass through as they are."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from urllib.parse import urlparse

import httpx

from nmafc.errors import ProviderError
from nmafc.providers.base import Chunk, Json, transport_error, upstream_message
from nmafc.providers.transport import Upstream
from nmafc.settings.llm import LlmSettings

OPENAI_BASE_URL = "https://api.openai.com/v1"

# Hosted endpoints and the variable their users already have the key in.
KEY_VARIABLES = (
    ("azure", "AZURE_OPENAI_API_KEY"),
    ("groq.com", "GROQ_API_KEY"),
    ("openrouter.ai", "OPENROUTER_API_KEY"),
    ("together", "TOGETHER_API_KEY"),
)


def provider_key(settings: LlmSettings, base_url: str) -> str | None:
    """The configured key, else the usual variable of the host ``base_url`` names."""
    if settings.api_key is not None:
        return settings.api_key.get_secret_value()
    host = urlparse(base_url).hostname or ""
    for marker, variable in KEY_VARIABLES:
        if marker in host and os.environ.get(variable):
            return os.environ[variable]
    return os.environ.get("OPENAI_API_KEY") or None


def is_azure(base_url: str) -> bool:
    return "azure" in (urlparse(base_url).hostname or "")


async def sse_data(response: httpx.Response, provider: str) -> AsyncIterator[str]:
    """The ``data:`` payloads of a server-sent event stream, one per event."""
    data: list[str] = []
    try:
        async for line in response.aiter_lines():
            if not line:
                if data:
                    yield "\n".join(data)
                    data = []
                continue
            if line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            yield "\n".join(data)
    except httpx.HTTPError as exc:
        raise transport_error(provider, exc) from exc
    finally:
        await response.aclose()


class OpenAICompatProvider:
    """Forwards OpenAI Chat Completions JSON unchanged (the model filled in when missing)."""

    name = "openai"

    def __init__(self, settings: LlmSettings) -> None:
        base_url = settings.base_url or OPENAI_BASE_URL
        self.default_model = settings.model
        key = provider_key(settings, base_url)
        headers: dict[str, str] = {}
        params: dict[str, str] = {}
        if is_azure(base_url):
            # Azure authenticates with `api-key` and versions every call by query parameter.
            if key:
                headers["api-key"] = key
            params["api-version"] = settings.api_version or "2024-10-21"
        elif key:
            headers["Authorization"] = f"Bearer {key}"
        self.http = Upstream(self.name, settings, base_url=base_url, headers=headers, params=params)

    def _with_model(self, request: Json) -> Json:
        if request.get("model") or not self.default_model:
            return request
        return {**request, "model": self.default_model}

    async def complete(self, request: Json) -> Json:
        response = await self.http.request(
            "POST", "/chat/completions", json={**self._with_model(request), "stream": False}
        )
        return response_json(response, self.name)

    async def stream(self, request: Json) -> AsyncIterator[Chunk]:
        body = {**self._with_model(request), "stream": True}
        response = await self.http.request("POST", "/chat/completions", json=body, stream=True)
        return self._chunks(response)

    async def _chunks(self, response: httpx.Response) -> AsyncIterator[Chunk]:
        async for data in sse_data(response, self.name):
            if data.strip() == "[DONE]":
                return
            try:
                chunk = json.loads(data)
            except ValueError as exc:
                raise ProviderError(f"{self.name} sent an unreadable chunk: {data[:200]}") from exc
            if isinstance(chunk, dict) and "error" in chunk and "choices" not in chunk:
                raise ProviderError(f"{self.name} failed mid-stream: {upstream_message(data)}")
            yield chunk

    async def models(self) -> Json:
        return response_json(await self.http.request("GET", "/models"), self.name)

    async def aclose(self) -> None:
        await self.http.aclose()


def response_json(response: httpx.Response, provider: str) -> Json:
    try:
        value = response.json()
    except ValueError as exc:
        raise ProviderError(
            f"{provider} answered {response.status_code} with a body that is not JSON: "
            f"{response.text[:200]}"
        ) from exc
    if not isinstance(value, dict):
        raise ProviderError(f"{provider} answered with a JSON {type(value).__name__}.")
    return value

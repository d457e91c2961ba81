"""Anthropic's Messages API behind the OpenAI shape, translated both ways.

Requests: system messages become ``system``; ``tools`` / ``tool_choice`` / assistant
``tool_calls`` / ``tool`` results become ``tools`` / ``tool_choice`` / ``tool_use`` /
``tool_result`` blocks. Replies and stream events (``message_start``,
``content_block_*``, ``message_delta``) become ``chat.completion`` objects and chunks.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx

from nmafc.errors import ProviderError
from nmafc.providers.base import Chunk, Json
from nmafc.providers.openai_compat import response_json, sse_data
from nmafc.providers.transport import Upstream
from nmafc.settings.llm import LlmSettings

ANTHROPIC_BASE_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
# OpenAI fields with a direct Messages API counterpart; others have none and are dropped.
PASSED = ("temperature", "top_p", "top_k", "metadata")


def _text(content: Any) -> str:
    """The text of OpenAI message content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _image(part: Json) -> Json:
    url = str((part.get("image_url") or {}).get("url", ""))
    if url.startswith("data:") and ";base64," in url:
        media, data = url[5:].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": media, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def _blocks(content: Any) -> list[Json]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[Json] = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text":
            blocks.append({"type": "text", "text": part.get("text", "")})
        elif part.get("type") == "image_url":
            blocks.append(_image(part))
    return blocks


def _tool_choice(choice: Any) -> Json | None:
    if choice in (None, "auto"):
        return {"type": "auto"} if choice else None
    if choice == "required":
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        if name:
            return {"type": "tool", "name": name}
    return None


def to_anthropic(request: Json, default_model: str | None, default_max_tokens: int) -> Json:
    """An OpenAI chat request as a Messages API request."""
    system: list[str] = []
    messages: list[Json] = []

    def add(role: str, blocks: list[Json]) -> None:
        # The Messages API wants alternating roles: merge consecutive same-role turns.
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})

    for message in request.get("messages") or []:
        role = message.get("role")
        if role in ("system", "developer"):
            system.append(_text(message.get("content")))
        elif role == "tool":
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": message.get("tool_call_id", ""),
                        "content": _text(message.get("content")),
                    }
                ],
            )
        elif role == "assistant":
            blocks = _blocks(message.get("content"))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                try:
                    arguments = json.loads(function.get("arguments") or "{}")
                except ValueError:
                    arguments = {"_raw": function.get("arguments")}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id", ""),
                        "name": function.get("name", ""),
                        "input": arguments,
                    }
                )
            add("assistant", blocks)
        else:
            add("user", _blocks(message.get("content")))

    body: Json = {
        "model": request.get("model") or default_model,
        "messages": messages,
        "max_tokens": request.get("max_completion_tokens")
        or request.get("max_tokens")
        or default_max_tokens,
    }
    if system:
        body["system"] = "\n\n".join(s for s in system if s)
    for name in PASSED:
        if request.get(name) is not None:
            body[name] = request[name]
    stop = request.get("stop")
    if stop:
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    tools = [t for t in request.get("tools") or [] if t.get("type") == "function"]
    if tools:
        body["tools"] = [
            {
                "name": t["function"]["name"],
                "description": t["function"].get("description", ""),
                "input_schema": t["function"].get("parameters") or {"type": "object"},
            }
            for t in tools
        ]
    choice = _tool_choice(request.get("tool_choice"))
    if choice is not None:
        body["tool_choice"] = choice
    if request.get("stream"):
        body["stream"] = True
    return body


def _usage(usage: Json | None) -> Json | None:
    if not usage:
        return None
    prompt = int(usage.get("input_tokens") or 0)
    completion = int(usage.get("output_tokens") or 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def from_anthropic(reply: Json) -> Json:
    """A Messages API reply as an OpenAI ``chat.completion``."""
    text: list[str] = []
    calls: list[Json] = []
    for block in reply.get("content") or []:
        if block.get("type") == "text":
            text.append(block.get("text", ""))
        elif block.get("type") == "tool_use":
            calls.append(
                {
                    "id": block.get("id", ""),
                    "type": "function",
                    "function": {
                        "name": block.get("name", ""),
                        "arguments": json.dumps(block.get("input") or {}),
                    },
                }
            )
    message: Json = {"role": "assistant", "content": "".join(text) if text or not calls else None}
    if calls:
        message["tool_calls"] = calls
    completion: Json = {
        "id": reply.get("id", ""),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": STOP_REASONS.get(reply.get("stop_reason") or "", "stop"),
            }
        ],
    }
    usage = _usage(reply.get("usage"))
    if usage:
        completion["usage"] = usage
    return completion


class StreamTranslator:
    """Anthropic stream events in, OpenAI ``chat.completion.chunk`` objects out."""

    def __init__(self) -> None:
        self.id = ""
        self.model = ""
        self.created = int(time.time())
        self.tool_index: dict[int, int] = {}  # content block index -> tool_calls index
        self.prompt_tokens = 0

    def _chunk(self, delta: Json, finish: str | None = None) -> Chunk:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def feed(self, event: Json) -> list[Chunk]:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.id = message.get("id", "")
            self.model = message.get("model", "")
            self.prompt_tokens = int((message.get("usage") or {}).get("input_tokens") or 0)
            return [self._chunk({"role": "assistant", "content": ""})]
        if kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "tool_use":
                index = self.tool_index.setdefault(event.get("index", 0), len(self.tool_index))
                call = {
                    "index": index,
                    "id": block.get("id", ""),
                    "type": "function",
                    "function": {"name": block.get("name", ""), "arguments": ""},
                }
                return [self._chunk({"tool_calls": [call]})]
            if block.get("type") == "text" and block.get("text"):
                return [self._chunk({"content": block["text"]})]
            return []
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                return [self._chunk({"content": delta.get("text", "")})]
            if delta.get("type") == "input_json_delta":
                index = self.tool_index.get(event.get("index", 0), 0)
                arguments = {"index": index, "function": {"arguments": delta.get("partial_json")}}
                return [self._chunk({"tool_calls": [arguments]})]
            return []
        if kind == "message_delta":
            reason = (event.get("delta") or {}).get("stop_reason") or ""
            chunk = self._chunk({}, STOP_REASONS.get(reason, "stop"))
            output = int((event.get("usage") or {}).get("output_tokens") or 0)
            chunk["usage"] = {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": output,
                "total_tokens": self.prompt_tokens + output,
            }
            return [chunk]
        if kind == "error":
            error = event.get("error") or {}
            raise ProviderError(f"anthropic failed mid-stream: {error.get('message', event)}")
        return []  # ping, content_block_stop, message_stop


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, settings: LlmSettings) -> None:
        self.settings = settings
        self.default_model = settings.model
        key = (
            settings.api_key.get_secret_value()
            if settings.api_key is not None
            else os.environ.get("ANTHROPIC_API_KEY")
        )
        headers = {"anthropic-version": settings.api_version or ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        # Accept the base URL with or without the /v1 suffix users copy from docs.
        base = (settings.base_url or ANTHROPIC_BASE_URL).rstrip("/").removesuffix("/v1")
        self.http = Upstream(self.name, settings, base_url=f"{base}/v1", headers=headers)

    def _request(self, request: Json, stream: bool) -> Json:
        body = to_anthropic(request, self.default_model, self.settings.max_tokens)
        if not body.get("model"):
            raise ProviderError(
                "The request names no model and NMAFC_LLM_MODEL is not set.",
                fix="Send `model`, or set NMAFC_LLM_MODEL (e.g. claude-sonnet-4-5).",
            )
        body["stream"] = stream
        return body

    async def complete(self, request: Json) -> Json:
        body = self._request(request, stream=False)
        response = await self.http.request("POST", "/messages", json=body)
        return from_anthropic(response_json(response, self.name))

    async def stream(self, request: Json) -> AsyncIterator[Chunk]:
        body = self._request(request, stream=True)
        response = await self.http.request("POST", "/messages", json=body, stream=True)
        return self._chunks(response)

    async def _chunks(self, response: httpx.Response) -> AsyncIterator[Chunk]:
        translator = StreamTranslator()
        async for data in sse_data(response, self.name):
            try:
                event = json.loads(data)
            except ValueError as exc:
                raise ProviderError(f"anthropic sent an unreadable event: {data[:200]}") from exc
            for chunk in translator.feed(event):
                yield chunk

    async def models(self) -> Json:
        listing = response_json(await self.http.request("GET", "/models"), self.name)
        return {
            "object": "list",
            "data": [
                {"id": m.get("id"), "object": "model", "created": 0, "owned_by": "anthropic"}
                for m in listing.get("data") or []
            ],
        }

    async def aclose(self) -> None:
        await self.http.aclose()

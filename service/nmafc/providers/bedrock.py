"""AWS Bedrock through boto3's Converse API, behind the OpenAI shape.

boto3 is imported only when this provider is chosen (``pip install 'nmafc[bedrock]'``);
its blocking calls run in worker threads. Credentials come from the AWS chain.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio.to_thread

from nmafc.errors import MissingExtra, ProviderError
from nmafc.providers.anthropic import STOP_REASONS, to_anthropic
from nmafc.providers.base import Chunk, Json, status_error
from nmafc.settings.llm import LlmSettings

_DONE = object()


def to_converse(request: Json, default_model: str | None, max_tokens: int) -> Json:
    """An OpenAI chat request as ``converse`` keyword arguments (via the Anthropic shape,
    whose blocks Converse mirrors)."""
    shaped = to_anthropic(request, default_model, max_tokens)
    messages = []
    for message in shaped["messages"]:
        blocks = []
        for block in message["content"]:
            if block["type"] == "text":
                blocks.append({"text": block["text"]})
            elif block["type"] == "tool_use":
                blocks.append(
                    {
                        "toolUse": {
                            "toolUseId": block["id"],
                            "name": block["name"],
                            "input": block["input"],
                        }
                    }
                )
            elif block["type"] == "tool_result":
                blocks.append(
                    {
                        "toolResult": {
                            "toolUseId": block["tool_use_id"],
                            "content": [{"text": block["content"]}],
                        }
                    }
                )
        messages.append({"role": message["role"], "content": blocks})
    config: Json = {"maxTokens": shaped["max_tokens"]}
    for ours, theirs in (("temperature", "temperature"), ("top_p", "topP")):
        if ours in shaped:
            config[theirs] = shaped[ours]
    if "stop_sequences" in shaped:
        config["stopSequences"] = shaped["stop_sequences"]
    kwargs: Json = {"modelId": shaped["model"], "messages": messages, "inferenceConfig": config}
    if shaped.get("system"):
        kwargs["system"] = [{"text": shaped["system"]}]
    if shaped.get("tools"):
        tool_config: Json = {
            "tools": [
                {
                    "toolSpec": {
                        "name": t["name"],
                        "description": t["description"] or t["name"],
                        "inputSchema": {"json": t["input_schema"]},
                    }
                }
                for t in shaped["tools"]
            ]
        }
        choice = shaped.get("tool_choice") or {}
        if choice.get("type") == "any":
            tool_config["toolChoice"] = {"any": {}}
        elif choice.get("type") == "tool":
            tool_config["toolChoice"] = {"tool": {"name": choice["name"]}}
        kwargs["toolConfig"] = tool_config
    return kwargs


def from_converse(reply: Json, model: str) -> Json:
    """A ``converse`` reply as an OpenAI ``chat.completion``."""
    text, calls = [], []
    for block in ((reply.get("output") or {}).get("message") or {}).get("content") or []:
        if "text" in block:
            text.append(block["text"])
        elif "toolUse" in block:
            use = block["toolUse"]
            calls.append(
                {
                    "id": use.get("toolUseId", ""),
                    "type": "function",
                    "function": {
                        "name": use.get("name", ""),
                        "arguments": json.dumps(use["input"]),
                    },
                }
            )
    message: Json = {"role": "assistant", "content": "".join(text) if text or not calls else None}
    if calls:
        message["tool_calls"] = calls
    usage = reply.get("usage") or {}
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": STOP_REASONS.get(str(reply.get("stopReason") or ""), "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": usage.get("inputTokens", 0),
            "completion_tokens": usage.get("outputTokens", 0),
            "total_tokens": usage.get("totalTokens", 0),
        },
    }


class BedrockProvider:
    name = "bedrock"

    def __init__(self, settings: LlmSettings) -> None:
        try:
            import boto3
            from botocore.config import Config
        except ImportError as exc:
            raise MissingExtra(
                "NMAFC_LLM_PROVIDER=bedrock needs boto3, which is not installed.",
                fix="pip install 'nmafc[bedrock]'",
            ) from exc
        self.settings = settings
        self.default_model = settings.model
        config = Config(
            read_timeout=settings.timeout_s,
            connect_timeout=settings.connect_timeout_s,
            retries={"max_attempts": settings.max_retries + 1, "mode": "adaptive"},
            max_pool_connections=settings.max_concurrency,
        )
        self.client = boto3.client(
            "bedrock-runtime",
            region_name=settings.aws_region,
            endpoint_url=settings.base_url,
            config=config,
        )
        self._errors: tuple[type[Exception], ...] = _botocore_errors()

    def _kwargs(self, request: Json) -> Json:
        kwargs = to_converse(request, self.default_model, self.settings.max_tokens)
        if not kwargs.get("modelId"):
            raise ProviderError(
                "The request names no model and NMAFC_LLM_MODEL is not set.",
                fix="Send `model`, or set NMAFC_LLM_MODEL to a Bedrock model id.",
            )
        return kwargs

    def _map(self, exc: Exception) -> ProviderError:
        response = getattr(exc, "response", None) or {}
        status = int((response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or 502)
        message = (response.get("Error") or {}).get("Message") or str(exc)
        return status_error(self.name, status, message)

    async def complete(self, request: Json) -> Json:
        kwargs = self._kwargs(request)
        try:
            reply = await anyio.to_thread.run_sync(lambda: self.client.converse(**kwargs))
        except self._errors as exc:
            raise self._map(exc) from exc
        return from_converse(reply, kwargs["modelId"])

    async def stream(self, request: Json) -> AsyncIterator[Chunk]:
        kwargs = self._kwargs(request)
        try:
            reply = await anyio.to_thread.run_sync(lambda: self.client.converse_stream(**kwargs))
        except self._errors as exc:
            raise self._map(exc) from exc
        return self._chunks(reply["stream"], kwargs["modelId"])

    async def _chunks(self, events: Any, model: str) -> AsyncIterator[Chunk]:
        # The event stream blocks: a thread reads it and hands events to this loop.
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()

        def pump() -> None:
            try:
                for event in events:
                    loop.call_soon_threadsafe(queue.put_nowait, event)
            except Exception as exc:
                loop.call_soon_threadsafe(queue.put_nowait, exc)
            loop.call_soon_threadsafe(queue.put_nowait, _DONE)

        threading.Thread(target=pump, daemon=True, name="bedrock-stream").start()
        ident, created, tools = f"chatcmpl-{uuid.uuid4().hex}", int(time.time()), 0

        def chunk(delta: Json, finish: str | None = None) -> Chunk:
            return {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        while (event := await queue.get()) is not _DONE:
            if isinstance(event, Exception):
                raise self._map(event)
            if "messageStart" in event:
                yield chunk({"role": "assistant", "content": ""})
            elif "contentBlockStart" in event:
                use = (event["contentBlockStart"].get("start") or {}).get("toolUse")
                if use:
                    call = {
                        "index": tools,
                        "id": use.get("toolUseId", ""),
                        "type": "function",
                        "function": {"name": use.get("name", ""), "arguments": ""},
                    }
                    tools += 1
                    yield chunk({"tool_calls": [call]})
            elif "contentBlockDelta" in event:
                delta = event["contentBlockDelta"].get("delta") or {}
                if "text" in delta:
                    yield chunk({"content": delta["text"]})
                elif "toolUse" in delta:
                    arguments = {"arguments": delta["toolUse"].get("input", "")}
                    yield chunk({"tool_calls": [{"index": tools - 1, "function": arguments}]})
            elif "messageStop" in event:
                reason = str(event["messageStop"].get("stopReason") or "")
                yield chunk({}, STOP_REASONS.get(reason, "stop"))

    async def models(self) -> Json:
        model = self.default_model or ""
        # Listing needs the separate `bedrock` control-plane client and IAM rights; the
        # configured model is what this proxy can serve anyway.
        return {
            "object": "list",
            "data": [{"id": model, "object": "model", "created": 0, "owned_by": "bedrock"}]
            if model
            else [],
        }

    async def aclose(self) -> None:
        close = getattr(self.client, "close", None)
        if callable(close):
            close()


def _botocore_errors() -> tuple[type[Exception], ...]:
    from botocore.exceptions import BotoCoreError, ClientError

    return (ClientError, BotoCoreError)

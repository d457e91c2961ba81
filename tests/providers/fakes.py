"""Fake upstream LLMs: real HTTP servers on 127.0.0.1 speaking OpenAI's or Anthropic's wire
format, replying from a script and recording every request they received.

A script entry is a dict:
- ``{"text": "..."}``: a reply (streamed word by word when the request streams);
- ``{"chunks": [...], "gate": True}``: stream these pieces; with ``gate`` the server waits
  after the first piece until the test calls ``release()`` (proves nothing buffers);
- ``{"tool": {"name": ..., "arguments": {...}}}``: a tool call;
- ``{"content": "..."}``: raw assistant content (e.g. malformed JSON);
- ``{"status": 429, "message": ..., "headers": {...}}``: an error status;
- ``{"sleep": 2.0}``: answer only after that long (timeouts).
With the script empty every request gets ``{"text": "OK"}``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

Flavor = Literal["openai", "anthropic"]


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def system_text(self) -> str:
        """Every system instruction the upstream saw, in either wire format."""
        if "system" in self.body:
            return str(self.body["system"])
        return "\n".join(
            str(m.get("content"))
            for m in self.body.get("messages", [])
            if m.get("role") == "system"
        )


@dataclass
class FakeUpstream:
    flavor: Flavor
    script: list[dict[str, Any]] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    url: str = ""
    _gate: threading.Event = field(default_factory=threading.Event)

    def release(self) -> None:
        self._gate.set()

    def reply(self, *entries: dict[str, Any]) -> None:
        self.script.extend(entries)

    @property
    def chat_requests(self) -> list[Received]:
        return [r for r in self.received if r.path.endswith(("/chat/completions", "/messages"))]

    def _next(self) -> dict[str, Any]:
        return self.script.pop(0) if self.script else {"text": "OK"}

    # -- the app ----------------------------------------------------------------------

    async def chat(self, request: Request) -> Response:
        body = await request.json()
        self.received.append(Received(request.url.path, dict(request.headers), body))
        entry = self._next()
        if "sleep" in entry:
            await asyncio.sleep(entry["sleep"])
            entry = {"text": "late"}
        if "status" in entry:
            return self._error(entry)
        model = body.get("model") or "fake-model"
        if body.get("stream"):
            pieces = entry.get("chunks") or _words(entry.get("text", entry.get("content", "")))
            return StreamingResponse(
                self._stream(pieces, model, entry),
                media_type="text/event-stream",
            )
        return JSONResponse(self._complete(entry, model))

    def _error(self, entry: dict[str, Any]) -> Response:
        message = entry.get("message", "scripted failure")
        if self.flavor == "anthropic":
            payload = {"type": "error", "error": {"type": "api_error", "message": message}}
        else:
            payload = {"error": {"message": message, "type": "server_error", "code": None}}
        return JSONResponse(payload, status_code=entry["status"], headers=entry.get("headers"))

    def _complete(self, entry: dict[str, Any], model: str) -> dict[str, Any]:
        text = entry.get("text", entry.get("content"))
        tool = entry.get("tool")
        if self.flavor == "anthropic":
            content: list[dict[str, Any]] = []
            if text is not None:
                content.append({"type": "text", "text": text})
            if tool:
                content.append(
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": tool["name"],
                        "input": tool["arguments"],
                    }
                )
            return {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "tool_use" if tool else "end_turn",
                "usage": {"input_tokens": 11, "output_tokens": 7},
            }
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if tool:
            arguments = tool["arguments"]
            message["tool_calls"] = [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": tool["name"],
                        "arguments": arguments
                        if isinstance(arguments, str)
                        else json.dumps(arguments),
                    },
                }
            ]
        return {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if tool else "stop"}
            ],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }

    async def _stream(
        self, pieces: list[str], model: str, entry: dict[str, Any]
    ) -> AsyncIterator[bytes]:
        events = (
            _anthropic_events(pieces, model, entry.get("tool"))
            if self.flavor == "anthropic"
            else _openai_events(pieces, model)
        )
        for number, event in enumerate(events):
            yield event
            if entry.get("gate") and number == 1:  # after the first text piece
                await asyncio.to_thread(self._gate.wait, 10)
            await asyncio.sleep(0.01)

    async def models(self, request: Request) -> Response:
        self.received.append(Received(request.url.path, dict(request.headers), {}))
        if self.flavor == "anthropic":
            data = [{"type": "model", "id": "claude-fake", "display_name": "Claude Fake"}]
            return JSONResponse({"data": data, "has_more": False})
        data = [{"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake"}]
        return JSONResponse({"object": "list", "data": data})

    def app(self) -> Starlette:
        chat = "/v1/messages" if self.flavor == "anthropic" else "/v1/chat/completions"
        return Starlette(
            routes=[
                Route(chat, self.chat, methods=["POST"]),
                Route("/v1/models", self.models, methods=["GET"]),
            ]
        )


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w if i == 0 else f" {w}" for i, w in enumerate(words)]


def _sse(payload: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


def _openai_events(pieces: list[str], model: str) -> Iterator[bytes]:
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model}
    yield _sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
    for piece in pieces:
        yield _sse({**base, "choices": [{"index": 0, "delta": {"content": piece}}]})
    yield _sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    yield b"data: [DONE]\n\n"


def _anthropic_events(
    pieces: list[str], model: str, tool: dict[str, Any] | None
) -> Iterator[bytes]:
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "usage": {"input_tokens": 11, "output_tokens": 1},
    }
    yield _sse({"type": "message_start", "message": message}, "message_start")
    yield _sse(
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        "content_block_start",
    )
    for piece in pieces:
        delta = {"type": "text_delta", "text": piece}
        yield _sse(
            {"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"
        )
    yield _sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
    if tool:
        block = {"type": "tool_use", "id": "toolu_1", "name": tool["name"], "input": {}}
        yield _sse(
            {"type": "content_block_start", "index": 1, "content_block": block},
            "content_block_start",
        )
        arguments = json.dumps(tool["arguments"])
        for half in (arguments[: len(arguments) // 2], arguments[len(arguments) // 2 :]):
            delta = {"type": "input_json_delta", "partial_json": half}
            yield _sse(
                {"type": "content_block_delta", "index": 1, "delta": delta}, "content_block_delta"
            )
        yield _sse({"type": "content_block_stop", "index": 1}, "content_block_stop")
    stop = "tool_use" if tool else "end_turn"
    yield _sse(
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}},
        "message_delta",
    )
    yield _sse({"type": "message_stop"}, "message_stop")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_upstream(flavor: Flavor) -> Iterator[FakeUpstream]:
    """A fake upstream served by uvicorn on a loopback port in a thread."""
    fake = FakeUpstream(flavor)
    port = free_port()
    config = uvicorn.Config(
        fake.app(), host="127.0.0.1", port=port, log_level="warning", lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True, name=f"fake-{flavor}")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the fake upstream did not start")
        time.sleep(0.01)
    fake.url = f"http://127.0.0.1:{port}" + ("" if flavor == "anthropic" else "/v1")
    try:
        yield fake
    finally:
        fake.release()
        server.should_exit = True
        thread.join(timeout=10)

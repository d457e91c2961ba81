"""NMAFC on a loopback port (uvicorn) for the chat tests, driven by the real ``openai`` SDK."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai
import uvicorn
from asgi_lifespan import LifespanManager

from nmafc.api import create_app
from nmafc.api.state import AppState
from nmafc.core.events import EventKind
from nmafc.core.scope import Scope

from ..providers.fakes import FakeUpstream, free_port
from .conftest import service_settings

SCOPE = Scope("agent-a", "chat-1")


@dataclass
class ChatService:
    state: AppState
    url: str
    clients: list[openai.AsyncOpenAI] = field(default_factory=list)

    def client(self, api_key: str = "unused", **headers: str) -> openai.AsyncOpenAI:
        # No SDK retries: each test scripts exactly what the upstream answers.
        client = openai.AsyncOpenAI(
            base_url=f"{self.url}/v1", api_key=api_key, max_retries=0, default_headers=headers
        )
        self.clients.append(client)
        return client

    def turns(self, scope: Scope = SCOPE) -> int:
        return self.state.engine.stats(scope).turns

    def turn_events(self, scope: Scope = SCOPE) -> int:
        events = self.state.engine.events(scope, limit=1000)
        return sum(1 for e in events if e.kind == EventKind.TURN)

    async def settled(self, scope: Scope = SCOPE) -> None:
        """Wait until the exchange queue of ``scope`` is empty (remembering runs after the
        response has been sent)."""
        deadline = time.monotonic() + 20
        while self.state.engine.queue.pending(scope):
            assert time.monotonic() < deadline, "the queued exchange was never remembered"
            await asyncio.sleep(0.05)


@asynccontextmanager
async def chat_service(
    tmp_path: Path, embedder: Any, upstream: FakeUpstream | None, **overrides: Any
) -> AsyncIterator[ChatService]:
    """NMAFC on a loopback port (uvicorn, in this event loop) forwarding to ``upstream``
    (None: no upstream LLM configured)."""
    if upstream is not None:
        llm = {"provider": upstream.flavor, "base_url": upstream.url, "model": "fake-model"}
        llm.update({"max_retries": 0, "timeout_s": 5, **overrides.pop("llm", {})})
        overrides["llm"] = llm
    settings = service_settings(tmp_path, **overrides)
    app = create_app(settings, embedder=embedder)
    async with LifespanManager(app, startup_timeout=120, shutdown_timeout=60) as manager:
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(
                manager.app, host="127.0.0.1", port=port, lifespan="off", log_level="warning"
            )
        )
        task = asyncio.create_task(server.serve())
        while not server.started:
            assert not task.done(), "NMAFC did not start"
            await asyncio.sleep(0.02)
        service = ChatService(manager._state["nmafc"], f"http://127.0.0.1:{port}")
        try:
            yield service
        finally:
            for client in service.clients:
                await client.close()
            server.should_exit = True
            await task


def scoped(conversation: str = SCOPE.conversation_id) -> dict[str, str]:
    return {"X-Agent-ID": SCOPE.agent_id, "X-Conversation-ID": conversation}

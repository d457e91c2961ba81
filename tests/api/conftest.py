"""Fixtures for the HTTP service: the real app, real stores, an in-process transport."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from fastapi import FastAPI
from httpx_ws.transport import ASGIWebSocketTransport

from nmafc.api import create_app
from nmafc.api.state import AppState
from nmafc.client import AsyncClient
from nmafc.settings import Settings

from ..providers.fakes import FakeUpstream, running_upstream

if TYPE_CHECKING:
    from .chat_service import ChatService

BASE_URL = "http://nmafc.test"
KEY_A = "secret-key-of-agent-a"
KEY_B = "secret-key-of-agent-b"
ADMIN = "secret-admin-key"
BOOTSTRAP = f"{KEY_A}:agent-a,{KEY_B}:agent-b,{ADMIN}:*"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def service_settings(data_dir: Path, cold_uri: str | None = None, **overrides: Any) -> Settings:
    """Settings for a test app: verbatim extraction (exact counts), no timed services."""
    values: dict[str, Any] = {
        "data_dir": data_dir,
        "extractor": "verbatim",
        "maintenance": {"pass_enabled": False, "compaction_enabled": False, "flush_enabled": False},
        **overrides,
    }
    if cold_uri is not None:
        values["cold"] = {"uri": cold_uri}
    return Settings(**values)


@dataclass
class Running:
    app: FastAPI
    http: httpx.AsyncClient
    state: AppState

    def client(self, api_key: str | None = None, **scope: str) -> AsyncClient:
        """A typed client on this app (``agent_id=``, ``conversation_id=``)."""
        return AsyncClient(BASE_URL, api_key=api_key, http=self.http, **scope)


@asynccontextmanager
async def serve(settings: Settings, embedder: Any) -> AsyncIterator[Running]:
    """Run the app's lifespan and give an in-process HTTP + WebSocket transport to it."""
    app = create_app(settings, embedder=embedder)
    async with LifespanManager(app, startup_timeout=120, shutdown_timeout=60) as manager:
        transport = ASGIWebSocketTransport(manager.app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as http:
            yield Running(app, http, manager._state["nmafc"])


@pytest.fixture
async def running(tmp_path: Path, shared_embedder: Any) -> AsyncIterator[Running]:
    """The embedded default (SQLite + local LanceDB), auth off because no key exists."""
    async with serve(service_settings(tmp_path), shared_embedder) as app:
        yield app


@pytest.fixture
async def secured(tmp_path: Path, shared_embedder: Any) -> AsyncIterator[Running]:
    """Auth on through bootstrap keys: agent-a, agent-b and an admin key."""
    settings = service_settings(tmp_path, api={"keys": BOOTSTRAP})
    async with serve(settings, shared_embedder) as app:
        yield app


# -- the chat proxy: NMAFC over real HTTP forwarding to a fake upstream LLM ----------------


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream("openai") as fake:
        yield fake


@pytest.fixture(scope="module")
def anthropic_upstream() -> Iterator[FakeUpstream]:
    with running_upstream("anthropic") as fake:
        yield fake


@pytest.fixture
def fake(upstream: FakeUpstream) -> Iterator[FakeUpstream]:
    upstream.script.clear()
    upstream.received.clear()
    upstream._gate.clear()
    yield upstream
    upstream.release()


@pytest.fixture
async def service(
    tmp_path: Path, shared_embedder: Any, fake: FakeUpstream
) -> AsyncIterator[ChatService]:
    from .chat_service import chat_service  # it builds on service_settings above

    async with chat_service(tmp_path, shared_embedder, fake) as running:
        yield running

"""Fixtures: fake upstream LLMs (real HTTP servers on loopback)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fakes import FakeUpstream, running_upstream


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def _openai_server() -> Iterator[FakeUpstream]:
    with running_upstream("openai") as fake:
        yield fake


@pytest.fixture(scope="session")
def _anthropic_server() -> Iterator[FakeUpstream]:
    with running_upstream("anthropic") as fake:
        yield fake


def _fresh(fake: FakeUpstream) -> FakeUpstream:
    fake.script.clear()
    fake.received.clear()
    fake._gate.clear()
    return fake


@pytest.fixture
def fake_openai(_openai_server: FakeUpstream) -> Iterator[FakeUpstream]:
    """The session's fake OpenAI-compatible server, script and records reset."""
    yield _fresh(_openai_server)
    _openai_server.release()


@pytest.fixture
def fake_anthropic(_anthropic_server: FakeUpstream) -> Iterator[FakeUpstream]:
    """The session's fake Anthropic Messages API server, script and records reset."""
    yield _fresh(_anthropic_server)
    _anthropic_server.release()

"""``nmafc.proxy.MemoryOpenAI`` wrapping the official ``openai`` clients, against a fake
OpenAI-compatible upstream on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from nmafc.core.events import EventKind
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import InvalidInput
from nmafc.memory import Memory, SyncMemory
from nmafc.proxy import MemoryOpenAI
from nmafc.settings import Settings

from .providers.fakes import FakeUpstream, running_upstream


@pytest.fixture(scope="module")
def server() -> Iterator[FakeUpstream]:
    with running_upstream("openai") as fake:
        yield fake


@pytest.fixture
def upstream(server: FakeUpstream) -> FakeUpstream:
    server.script.clear()
    server.received.clear()
    return server


@pytest.fixture
def memory(tmp_path: Path, shared_embedder: Any) -> Iterator[SyncMemory]:
    settings = Settings(data_dir=tmp_path, extractor="verbatim", consolidation={"inline": False})  # type: ignore[arg-type]
    engine = MemoryEngine.open(settings, embedder=shared_embedder)
    yield SyncMemory("proxy-agent", "c1", engine=engine)
    engine.close()


def turns(memory: SyncMemory) -> int:
    return sum(1 for e in memory.events(limit=1000) if e.kind == EventKind.TURN)


def test_sync_client_recalls_injects_and_remembers(
    memory: SyncMemory, upstream: FakeUpstream
) -> None:
    memory.remember({"role": "user", "content": "I am allergic to shellfish."})
    upstream.reply({"text": "Then skip the prawns."})
    with openai.OpenAI(base_url=upstream.url, api_key="k", max_retries=0) as inner:
        client = MemoryOpenAI(inner, memory)
        reply = client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "Can I eat the prawns?"}]
        )
        assert client.models.list().data[0].id == "fake-model"  # the rest is the client's
    assert reply.choices[0].message.content == "Then skip the prawns."
    system = upstream.chat_requests[0].body["messages"][0]
    assert system["role"] == "system"
    assert "allergic to shellfish" in system["content"]
    assert memory.stats().turns == 3
    assert turns(memory) == 2  # the seed, then this exchange once


def test_sync_stream_is_remembered_once_after_it_ends(
    memory: SyncMemory, upstream: FakeUpstream
) -> None:
    upstream.reply({"chunks": ["Bom", " dia"]})
    with openai.OpenAI(base_url=upstream.url, api_key="k", max_retries=0) as inner:
        client = MemoryOpenAI(inner, memory)
        stream = client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "Say good morning in Portuguese."}],
            stream=True,
        )
        pieces = []
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                pieces.append(chunk.choices[0].delta.content)
                assert memory.stats().turns == 0  # not before the stream has ended
    assert pieces == ["Bom", " dia"]
    assert memory.stats().turns == 2
    assert "Bom dia" in " ".join(r.content for r in memory.engine.page(memory.scope_id).records)


def test_memory_switches_turn_recall_and_remembering_off(
    memory: SyncMemory, upstream: FakeUpstream
) -> None:
    memory.remember({"role": "user", "content": "My cat is called Miso."})
    with openai.OpenAI(base_url=upstream.url, api_key="k", max_retries=0) as inner:
        MemoryOpenAI(inner, memory).chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "What is my cat called?"}],
            memory_recall=False,
            memory_remember=False,
        )
    sent = upstream.chat_requests[0].body
    assert sent["messages"] == [{"role": "user", "content": "What is my cat called?"}]
    assert "memory_recall" not in sent
    assert memory.stats().turns == 1


@pytest.mark.parametrize("value", ["false", "no", 0, "0", 1])
@pytest.mark.parametrize("switch", ["memory_recall", "memory_remember"])
def test_a_memory_switch_that_is_not_a_boolean_is_refused_before_the_call(
    memory: SyncMemory, upstream: FakeUpstream, switch: str, value: Any
) -> None:
    with openai.OpenAI(base_url=upstream.url, api_key="k", max_retries=0) as inner:
        client = MemoryOpenAI(inner, memory)
        with pytest.raises(InvalidInput, match=switch) as raised:
            client.chat.completions.create(
                model="fake-model",
                messages=[{"role": "user", "content": "Keep this to yourself."}],
                **{switch: value},
            )
    assert raised.value.fix == f"Pass {switch}=True or {switch}=False."
    assert not upstream.chat_requests
    assert memory.stats().turns == 0


@pytest.mark.anyio
async def test_async_client_recalls_and_remembers_streams(
    memory: SyncMemory, upstream: FakeUpstream
) -> None:
    await Memory(_sync=memory).remember({"role": "user", "content": "I live in Lisbon."})
    upstream.reply({"text": "Lisbon."}, {"chunks": ["Sunny", " there"]})
    async with openai.AsyncOpenAI(base_url=upstream.url, api_key="k", max_retries=0) as inner:
        client = MemoryOpenAI(inner, Memory(_sync=memory))
        reply = await client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "Which city do I live in?"}]
        )
        stream = await client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "Weather?"}], stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert reply.choices[0].message.content == "Lisbon."
    assert text == "Sunny there"
    assert "I live in Lisbon" in upstream.chat_requests[0].body["messages"][0]["content"]
    assert memory.stats().turns == 5


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

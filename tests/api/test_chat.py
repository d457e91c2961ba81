"""``/v1/chat/completions`` end to end: the official ``openai`` SDK over real HTTP to NMAFC
(uvicorn on loopback), NMAFC to a fake upstream LLM (another real HTTP server).

Nothing of NMAFC is patched; the only fake is the upstream, which records what it got.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from nmafc.core.scope import Scope

from ..providers.fakes import FakeUpstream
from .chat_service import SCOPE, ChatService, chat_service, scoped
from .conftest import BOOTSTRAP, KEY_A, service_settings

pytestmark = pytest.mark.anyio


async def remember_first(service: ChatService) -> None:
    service.state.engine.remember(
        SCOPE,
        [_message("user", "My sister Ines lives in Porto and works as a marine biologist.")],
    )


def _message(role: str, content: str) -> Any:
    from nmafc.core.turns import Message

    return Message(content=content, role=role)


async def test_upstream_receives_the_recalled_memory_in_its_system_message(
    service: ChatService, fake: FakeUpstream
) -> None:
    await remember_first(service)
    fake.reply({"text": "She lives in Porto."})
    client = service.client(**scoped())
    raw = await client.chat.completions.with_raw_response.create(
        model="fake-model",
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Which city does my sister Ines live in?"},
        ],
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "She lives in Porto."
    assert raw.headers["x-nmafc-memory"] == "ok"
    sent = fake.chat_requests[0].body
    system = sent["messages"][0]
    assert system["role"] == "system"
    assert "Ines lives in Porto" in system["content"]
    assert "The question asks for a city or town" in system["content"]  # SPEC §7 rule
    assert sent["messages"][1:] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Which city does my sister Ines live in?"},
    ]
    await service.settled()
    assert service.turns() == 3  # the remembered sentence + this user turn + the reply


async def test_stream_reaches_the_client_chunk_by_chunk_then_is_remembered_once(
    service: ChatService, fake: FakeUpstream
) -> None:
    # The upstream holds the rest of its stream until the client has seen the first piece:
    # if anything between them buffered, this test would hang and time out.
    fake.reply({"chunks": ["Porto", " is", " lovely", " in", " May."], "gate": True})
    client = service.client(**scoped())
    stream = await client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "Tell me about Porto."}],
        stream=True,
    )
    pieces: list[str] = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
            if len(pieces) == 1:
                assert service.turns() == 0  # nothing remembered while streaming
                fake.release()
    assert pieces == ["Porto", " is", " lovely", " in", " May."]
    await service.settled()
    assert service.turns() == 2
    assert service.turn_events() == 1  # one remember: user turn + assistant turn, once
    contents = [r.content for r in service.state.engine.page(SCOPE, after=0, limit=10).records]
    assert "Porto is lovely in May." in " ".join(contents)


async def test_tools_and_unknown_fields_pass_through_and_memory_fields_are_stripped(
    service: ChatService, fake: FakeUpstream
) -> None:
    fake.reply({"tool": {"name": "get_weather", "arguments": {"city": "Porto"}}})
    tool = {
        "type": "function",
        "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}},
    }
    client = service.client()
    completion = await client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "Weather in Porto?"}],
        tools=[tool],  # type: ignore[list-item]
        tool_choice="auto",
        extra_body={
            "agent_id": SCOPE.agent_id,
            "conversation_id": "from-body",
            "memory_recall": False,
            "vendor_extension": {"a": 1},
        },
    )
    call = completion.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert call.function.name == "get_weather"  # type: ignore[union-attr]
    sent = fake.chat_requests[0].body
    assert sent["tools"] == [tool]
    assert sent["tool_choice"] == "auto"
    assert sent["vendor_extension"] == {"a": 1}
    assert not {"agent_id", "conversation_id", "memory_recall"} & set(sent)
    assert sent["messages"] == [{"role": "user", "content": "Weather in Porto?"}]  # no recall
    scope = Scope(SCOPE.agent_id, "from-body")
    await service.settled(scope)
    assert service.turns(scope) == 1  # the user turn; a tool call has no text to remember


async def test_memory_remember_false_leaves_memory_alone(
    service: ChatService, fake: FakeUpstream
) -> None:
    client = service.client(**scoped())
    await client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "Forget this one."}],
        extra_body={"memory_remember": False, "memory_recall": False},
    )
    assert fake.chat_requests
    assert service.turns() == 0
    assert not service.state.engine.queue.pending(SCOPE)


@pytest.mark.parametrize(
    ("entry", "status", "error"),
    [
        ({"status": 429, "headers": {"Retry-After": "90"}}, 429, openai.RateLimitError),
        ({"status": 500, "message": "model melted"}, 502, openai.InternalServerError),
        ({"sleep": 2}, 504, openai.InternalServerError),
    ],
)
async def test_upstream_failures_map_to_statuses_and_leave_memory_unchanged(
    tmp_path: Path,
    shared_embedder: Any,
    fake: FakeUpstream,
    entry: dict[str, Any],
    status: int,
    error: type[Exception],
) -> None:
    async with chat_service(tmp_path, shared_embedder, fake, llm={"timeout_s": 0.5}) as service:
        await remember_first(service)
        before = service.state.engine.stats(SCOPE)
        client = service.client(**scoped())
        for stream in (False, True):
            fake.reply(entry)
            with pytest.raises(error) as raised:
                await client.chat.completions.create(
                    model="fake-model",
                    messages=[{"role": "user", "content": "Where does Ines live?"}],
                    stream=stream,
                )
            response = raised.value.response  # type: ignore[attr-defined]
            assert response.status_code == status
            body = response.json()["error"]  # OpenAI's error shape
            if status == 429:
                assert body["code"] == "provider_rate_limited"
                assert response.headers["retry-after"] == "90"
            if status == 502:
                assert "model melted" in body["message"]
        after = service.state.engine.stats(SCOPE)
        assert (after.turns, after.records) == (before.turns, before.records)
        assert not service.state.engine.queue.pending(SCOPE)


async def test_models_pass_through(service: ChatService) -> None:
    models = await service.client().models.list()
    assert [m.id for m in models.data] == ["fake-model"]


async def test_no_upstream_configured_is_a_503_naming_the_setting(running: Any) -> None:
    response = await running.http.post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}
    )
    assert response.status_code == 503
    assert "NMAFC_LLM_BASE_URL" in response.json()["error"]["fix"]


async def test_memory_failure_still_answers_and_says_memory_was_skipped(
    service: ChatService, fake: FakeUpstream
) -> None:
    # A message the store refuses (NUL-only content cannot be remembered) makes the
    # enqueue step fail; the caller still gets the upstream's reply.
    fake.reply({"text": "Still here."})
    client = service.client(**scoped())
    raw = await client.chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": " "}]
    )
    assert raw.parse().choices[0].message.content == "Still here."
    assert raw.headers["x-nmafc-memory"] == "skipped"


async def test_an_agent_key_decides_the_agent_and_cannot_reach_another(
    tmp_path: Path, shared_embedder: Any, fake: FakeUpstream
) -> None:
    async with chat_service(tmp_path, shared_embedder, fake, api={"keys": BOOTSTRAP}) as service:
        client = service.client(api_key=KEY_A, **{"X-Conversation-ID": "keyed"})
        await client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "I love sardines."}]
        )
        await service.settled(Scope("agent-a", "keyed"))
        assert service.turns(Scope("agent-a", "keyed")) == 2
        other = service.client(api_key=KEY_A, **{"X-Agent-ID": "agent-b"})
        with pytest.raises(openai.NotFoundError):
            await other.chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": "hi"}]
            )
        with pytest.raises(openai.NotFoundError):
            await service.client(api_key=KEY_A).chat.completions.create(
                model="fake-model",
                messages=[{"role": "user", "content": "hi"}],
                extra_body={"metadata": {"agent_id": "agent-b"}},
            )
        with pytest.raises(openai.AuthenticationError):
            await service.client(api_key="wrong").chat.completions.create(
                model="fake-model", messages=[{"role": "user", "content": "hi"}]
            )


async def test_anthropic_upstream_streams_through_the_openai_sdk(
    tmp_path: Path, shared_embedder: Any, anthropic_upstream: FakeUpstream
) -> None:
    anthropic_upstream.script.clear()
    anthropic_upstream.received.clear()
    anthropic_upstream.reply({"chunks": ["Hola", " Ana"]}, {"text": "Adios"})
    async with chat_service(tmp_path, shared_embedder, anthropic_upstream) as service:
        await remember_first(service)
        client = service.client(**scoped())
        stream = await client.chat.completions.create(
            model="claude-fake",
            messages=[{"role": "user", "content": "Where does Ines live?"}],
            stream=True,
        )
        pieces = [c.choices[0].delta.content async for c in stream if c.choices]
        assert "".join(p or "" for p in pieces) == "Hola Ana"
        completion = await client.chat.completions.create(
            model="claude-fake", messages=[{"role": "user", "content": "Bye"}]
        )
        assert completion.choices[0].message.content == "Adios"
        sent = anthropic_upstream.chat_requests[0]
        assert "Ines lives in Porto" in sent.body["system"]
        await service.settled()
        assert service.turns() == 5


async def test_the_queue_service_remembers_leftovers_at_start_up(
    tmp_path: Path, shared_embedder: Any, fake: FakeUpstream
) -> None:
    from nmafc.engine.engine import MemoryEngine

    settings = service_settings(tmp_path)
    engine = MemoryEngine.open(settings, embedder=shared_embedder)
    engine.queue.enqueue(SCOPE, [_message("user", "Queued before a crash.")])
    engine.close()
    async with chat_service(tmp_path, shared_embedder, fake) as service:
        await service.settled()
        assert service.turns() == 1


async def test_an_assistant_reply_through_the_proxy_is_a_fact_only_where_it_says_something(
    tmp_path: Path, shared_embedder: Any, fake: FakeUpstream
) -> None:
    fake.reply(
        {
            "text": "Sure, here you go! Since you are vegetarian, a lentil stew works well. "
            "Happy to help. Would you like a dessert too?"
        }
    )
    async with chat_service(tmp_path, shared_embedder, fake, extractor="rules") as service:
        await service.client(**scoped()).chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "What could I cook tonight? I'm vegetarian."}],
            extra_body={"memory_recall": False},
        )
        await service.settled()
        facts = [r.content for r in service.state.engine.working_set(SCOPE).values()]
        assert service.turns() == 2  # both turns are kept verbatim
    assert facts == ["Assistant: Since User is vegetarian, a lentil stew works well."]

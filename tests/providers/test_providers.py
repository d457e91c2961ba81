"""Providers against fake upstreams on loopback: pass-through, translation, error mapping."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from nmafc.errors import ProviderError, ProviderNotConfigured, ProviderRateLimited, ProviderTimeout
from nmafc.providers import create_provider
from nmafc.providers.anthropic import AnthropicProvider, from_anthropic, to_anthropic
from nmafc.providers.bedrock import from_converse, to_converse
from nmafc.providers.factory import llm_configured, provider_kind
from nmafc.providers.openai_compat import OpenAICompatProvider
from nmafc.providers.transport import TokenBucket, retry_after_s
from nmafc.settings.llm import LlmSettings

from .fakes import FakeUpstream

pytestmark = pytest.mark.anyio

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def llm(fake: FakeUpstream, **overrides: Any) -> LlmSettings:
    values: dict[str, Any] = {
        "provider": fake.flavor,
        "base_url": fake.url,
        "model": "fake-model",
        "api_key": "upstream-secret",
        "max_retries": 0,
        "timeout_s": 5,
        **overrides,
    }
    return LlmSettings(**values)


async def collect(provider: Any, request: dict[str, Any]) -> list[dict[str, Any]]:
    return [chunk async for chunk in await provider.stream(request)]


async def test_openai_requests_pass_through_untouched_with_the_key(
    fake_openai: FakeUpstream,
) -> None:
    provider = OpenAICompatProvider(llm(fake_openai))
    fake_openai.reply({"text": "Hello Ana"})
    request = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [WEATHER_TOOL],
        "response_format": {"type": "text"},
        "x_vendor_field": {"keep": [1, 2]},
    }
    completion = await provider.complete(request)
    await provider.aclose()
    assert completion["choices"][0]["message"]["content"] == "Hello Ana"
    sent = fake_openai.chat_requests[0]
    assert sent.body == {**request, "model": "fake-model", "stream": False}
    assert sent.headers["authorization"] == "Bearer upstream-secret"


async def test_openai_stream_yields_each_chunk(fake_openai: FakeUpstream) -> None:
    provider = OpenAICompatProvider(llm(fake_openai))
    fake_openai.reply({"chunks": ["one", " two", " three"]})
    chunks = await collect(provider, {"messages": [{"role": "user", "content": "count"}]})
    await provider.aclose()
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == "one two three"
    assert len(chunks) == 5  # role, three pieces, finish


async def test_upstream_429_maps_to_rate_limited_with_retry_after(
    fake_openai: FakeUpstream,
) -> None:
    provider = OpenAICompatProvider(llm(fake_openai, max_retries=2, retry_max_wait_s=5))
    fake_openai.reply({"status": 429, "message": "slow down", "headers": {"Retry-After": "120"}})
    with pytest.raises(ProviderRateLimited) as raised:
        await provider.complete({"messages": [{"role": "user", "content": "hi"}]})
    await provider.aclose()
    assert raised.value.status == 429
    assert raised.value.code == "provider_rate_limited"
    assert raised.value.retry_after_s == 120
    assert "slow down" in raised.value.detail
    assert len(fake_openai.chat_requests) == 1  # too long to wait for: handed back at once


async def test_a_short_retry_after_is_honoured_then_the_call_succeeds(
    fake_openai: FakeUpstream,
) -> None:
    provider = OpenAICompatProvider(llm(fake_openai, max_retries=2))
    fake_openai.reply(
        {"status": 429, "headers": {"Retry-After": "0.2"}},
        {"status": 503, "headers": {"retry-after-ms": "100"}},
        {"text": "finally"},
    )
    started = time.monotonic()
    completion = await provider.complete({"messages": [{"role": "user", "content": "hi"}]})
    await provider.aclose()
    assert completion["choices"][0]["message"]["content"] == "finally"
    assert len(fake_openai.chat_requests) == 3
    assert time.monotonic() - started >= 0.3


async def test_upstream_500_maps_to_502_with_the_providers_message(
    fake_openai: FakeUpstream,
) -> None:
    provider = OpenAICompatProvider(llm(fake_openai))
    fake_openai.reply({"status": 500, "message": "the model melted"})
    with pytest.raises(ProviderError) as raised:
        await provider.complete({"messages": [{"role": "user", "content": "hi"}]})
    await provider.aclose()
    assert raised.value.status == 502
    assert "the model melted" in raised.value.detail


async def test_a_slow_upstream_maps_to_504(fake_openai: FakeUpstream) -> None:
    provider = OpenAICompatProvider(llm(fake_openai, timeout_s=0.3))
    fake_openai.reply({"sleep": 2})
    with pytest.raises(ProviderTimeout) as raised:
        await provider.complete({"messages": [{"role": "user", "content": "hi"}]})
    await provider.aclose()
    assert raised.value.status == 504


async def test_a_refused_connection_is_a_502_naming_the_base_url_setting() -> None:
    provider = OpenAICompatProvider(
        LlmSettings(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0)
    )
    with pytest.raises(ProviderError) as raised:
        await provider.complete({"messages": [{"role": "user", "content": "hi"}]})
    await provider.aclose()
    assert raised.value.status == 502
    assert "NMAFC_LLM_BASE_URL" in raised.value.fix


async def test_anthropic_request_and_reply_translate_both_ways(
    fake_anthropic: FakeUpstream,
) -> None:
    provider = AnthropicProvider(llm(fake_anthropic, model="claude-fake"))
    fake_anthropic.reply(
        {"text": "Let me check.", "tool": {"name": "get_weather", "arguments": {"city": "Porto"}}}
    )
    completion = await provider.complete(
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Porto?"},
            ],
            "tools": [WEATHER_TOOL],
            "tool_choice": "required",
            "max_tokens": 100,
            "stop": "END",
        }
    )
    await provider.aclose()
    sent = fake_anthropic.chat_requests[0]
    assert sent.headers["x-api-key"] == "upstream-secret"
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["system"] == "Be brief."
    assert sent.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Porto?"}]}
    ]
    assert sent.body["tools"][0]["name"] == "get_weather"
    assert sent.body["tools"][0]["input_schema"]["properties"] == {"city": {"type": "string"}}
    assert sent.body["tool_choice"] == {"type": "any"}
    assert sent.body["max_tokens"] == 100
    assert sent.body["stop_sequences"] == ["END"]
    message = completion["choices"][0]["message"]
    assert message["content"] == "Let me check."
    call = message["tool_calls"][0]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Porto"}
    assert completion["choices"][0]["finish_reason"] == "tool_calls"
    assert completion["usage"] == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


async def test_anthropic_stream_becomes_openai_chunks_with_tool_calls(
    fake_anthropic: FakeUpstream,
) -> None:
    provider = AnthropicProvider(llm(fake_anthropic))
    fake_anthropic.reply(
        {
            "chunks": ["Sunny", " today"],
            "tool": {"name": "get_weather", "arguments": {"city": "Porto"}},
        }
    )
    chunks = await collect(provider, {"messages": [{"role": "user", "content": "Weather?"}]})
    await provider.aclose()
    assert fake_anthropic.chat_requests[0].body["stream"] is True
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    deltas = [c["choices"][0]["delta"] for c in chunks]
    assert deltas[0]["role"] == "assistant"
    assert "".join(d.get("content") or "" for d in deltas) == "Sunny today"
    calls = [call for d in deltas for call in d.get("tool_calls", [])]
    assert calls[0]["function"]["name"] == "get_weather"
    assert calls[0]["id"] == "toolu_1"
    arguments = "".join(c["function"].get("arguments") or "" for c in calls)
    assert json.loads(arguments) == {"city": "Porto"}
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_anthropic_errors_map_like_openai_ones(fake_anthropic: FakeUpstream) -> None:
    provider = AnthropicProvider(llm(fake_anthropic))
    fake_anthropic.reply({"status": 529, "message": "Overloaded"})
    with pytest.raises(ProviderError) as raised:
        await provider.complete({"messages": [{"role": "user", "content": "hi"}]})
    assert raised.value.status == 502
    assert "Overloaded" in raised.value.detail
    listing = await provider.models()
    await provider.aclose()
    assert listing["data"][0]["id"] == "claude-fake"
    assert listing["object"] == "list"


def test_assistant_tool_calls_and_tool_results_become_anthropic_blocks() -> None:
    body = to_anthropic(
        {
            "model": "claude-x",
            "messages": [
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_9",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Porto"}'},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "call_9", "content": "21C"},
                {"role": "tool", "tool_call_id": "call_9", "content": "sunny"},
            ],
        },
        None,
        512,
    )
    assert body["max_tokens"] == 512
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_9", "name": "get_weather", "input": {"city": "Porto"}}
    ]
    # consecutive tool results merge into one user turn (the API wants alternating roles)
    assert [b["content"] for b in body["messages"][2]["content"]] == ["21C", "sunny"]
    assert (
        from_anthropic({"content": [], "stop_reason": "max_tokens"})["choices"][0]["finish_reason"]
        == "length"
    )


def test_bedrock_converse_translation_round_trip() -> None:
    kwargs = to_converse(
        {
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather?"},
            ],
            "tools": [WEATHER_TOOL],
            "temperature": 0.2,
        },
        "anthropic.claude-3-haiku",
        256,
    )
    assert kwargs["modelId"] == "anthropic.claude-3-haiku"
    assert kwargs["system"] == [{"text": "Be brief."}]
    assert kwargs["messages"] == [{"role": "user", "content": [{"text": "Weather?"}]}]
    assert kwargs["inferenceConfig"] == {"maxTokens": 256, "temperature": 0.2}
    assert kwargs["toolConfig"]["tools"][0]["toolSpec"]["name"] == "get_weather"
    reply = from_converse(
        {
            "output": {
                "message": {
                    "content": [
                        {"text": "Checking."},
                        {
                            "toolUse": {
                                "toolUseId": "t1",
                                "name": "get_weather",
                                "input": {"city": "Porto"},
                            }
                        },
                    ]
                }
            },
            "stopReason": "tool_use",
            "usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7},
        },
        "m",
    )
    assert reply["choices"][0]["finish_reason"] == "tool_calls"
    assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_the_factory_picks_by_settings_and_refuses_no_upstream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    assert not llm_configured(LlmSettings())
    with pytest.raises(ProviderNotConfigured) as raised:
        create_provider(LlmSettings())
    assert "NMAFC_LLM_BASE_URL" in raised.value.fix
    assert provider_kind(LlmSettings(base_url="https://api.anthropic.com")) == "anthropic"
    assert provider_kind(LlmSettings(base_url="http://127.0.0.1:11434/v1")) == "openai"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert provider_kind(LlmSettings(model="claude-sonnet-4-5")) == "anthropic"


def test_retry_after_reads_seconds_dates_and_milliseconds() -> None:
    assert retry_after_s({"retry-after": "7"}) == 7
    assert retry_after_s({"retry-after-ms": "250"}) == 0.25
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0
    assert retry_after_s({}) is None


async def test_the_token_bucket_spaces_calls_at_the_configured_rate() -> None:
    bucket = TokenBucket(per_minute=600)  # 10/s, bursts of 10
    started = time.monotonic()
    for _ in range(13):
        await bucket.acquire()
    assert 0.2 <= time.monotonic() - started < 1.5

"""The chat routes answer errors in OpenAI's shape, so the ``openai`` SDK shows NMAFC's fix.

The official SDK over real HTTP to NMAFC (uvicorn on loopback), NMAFC to a fake upstream
LLM (another real HTTP server). ``/v1/memories`` keeps problem+json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from nmafc.errors import by_code

from ..providers.fakes import FakeUpstream
from .chat_service import SCOPE, ChatService, chat_service, scoped
from .conftest import BOOTSTRAP, KEY_A

pytestmark = pytest.mark.anyio
ERROR_FIELDS = {"message", "type", "param", "code", "fix", "request_id"}
ASK = [{"role": "user", "content": "Where does Ines live?"}]


def assert_openai_error(error: openai.APIStatusError, status: int, code: str) -> dict[str, Any]:
    """The SDK's exception carries NMAFC's code, and its text ends with the fix."""
    assert error.status_code == status, error.body
    assert error.response.headers["content-type"] == "application/json"
    body = error.response.json()
    assert set(body) == {"error"}
    inner: dict[str, Any] = body["error"]
    assert ERROR_FIELDS <= set(inner)
    assert error.code == code
    assert inner["fix"]
    assert f"Fix: {inner['fix']}" in str(error)  # what a user of the SDK reads
    assert inner["request_id"] == error.response.headers["x-request-id"]
    assert by_code(code).status == status or code == "request_validation_failed"
    return inner


@pytest.mark.parametrize("value", ["false", "no", 0, "0", "true", 1])
@pytest.mark.parametrize("field", ["memory_remember", "memory_recall", "stream"])
async def test_a_flag_that_is_not_a_json_boolean_is_422_naming_it_and_nothing_happens(
    service: ChatService, fake: FakeUpstream, field: str, value: Any
) -> None:
    client = service.client(**scoped())
    with pytest.raises(openai.UnprocessableEntityError) as raised:
        await client.chat.completions.create(
            model="fake-model", messages=ASK, extra_body={field: value}
        )
    inner = assert_openai_error(raised.value, 422, "request_validation_failed")
    assert (inner["type"], inner["param"]) == ("invalid_request_error", field)
    assert field in inner["message"]
    assert not fake.chat_requests  # refused before anything was forwarded
    await service.settled()
    assert service.turns() == 0


async def test_memory_remember_false_as_a_boolean_still_opts_out(
    service: ChatService, fake: FakeUpstream
) -> None:
    client = service.client(**scoped())
    await client.chat.completions.create(
        model="fake-model", messages=ASK, extra_body={"memory_remember": False}
    )
    assert fake.chat_requests
    assert service.turns() == 0
    assert not service.state.engine.queue.pending(SCOPE)


async def test_a_lone_surrogate_is_422_in_the_openai_shape(
    service: ChatService, fake: FakeUpstream
) -> None:
    # The SDK cannot even encode a lone surrogate, so this one goes out as raw bytes.
    raw = rb'{"model": "fake-model", "messages": [{"role": "user", "content": "x \ud800"}]}'
    async with httpx.AsyncClient(base_url=service.url) as http:
        response = await http.post(
            "/v1/chat/completions",
            content=raw,
            headers={**scoped(), "Content-Type": "application/json"},
        )
    assert response.status_code == 422, response.text
    inner = response.json()["error"]
    assert (inner["code"], inner["param"]) == ("request_validation_failed", "messages.0.content")
    assert "surrogate" in inner["message"]
    assert not fake.chat_requests
    assert service.turns() == 0


async def test_a_body_that_is_not_utf8_is_415_in_the_openai_shape(service: ChatService) -> None:
    body = '{"messages": [{"role": "user", "content": "hi"}]}'.encode("utf-16")
    async with httpx.AsyncClient(base_url=service.url) as http:
        response = await http.post(
            "/v1/chat/completions", content=body, headers={"Content-Type": "application/json"}
        )
    assert response.status_code == 415
    inner = response.json()["error"]
    assert inner["code"] == "body_not_utf8"
    assert "UTF-8" in inner["message"]


async def test_a_wrong_key_is_401_with_the_fix_in_the_message(
    tmp_path: Path, shared_embedder: Any, fake: FakeUpstream
) -> None:
    async with chat_service(tmp_path, shared_embedder, fake, api={"keys": BOOTSTRAP}) as service:
        with pytest.raises(openai.AuthenticationError) as raised:
            await service.client(api_key="wrong").chat.completions.create(
                model="fake-model", messages=ASK
            )
        inner = assert_openai_error(raised.value, 401, "unauthorized")
        assert inner["type"] == "authentication_error"
        assert raised.value.response.headers["www-authenticate"].startswith("Bearer")
        with pytest.raises(openai.AuthenticationError) as listing:
            await service.client(api_key="wrong").models.list()
        assert_openai_error(listing.value, 401, "unauthorized")
        # The memory API keeps problem+json.
        async with httpx.AsyncClient(base_url=service.url) as http:
            memories = await http.get("/v1/memories", headers={"Authorization": "Bearer wrong"})
        assert memories.headers["content-type"] == "application/problem+json"
        assert memories.json()["code"] == "unauthorized"
        ok = await service.client(api_key=KEY_A).models.list()
        assert ok.data


@pytest.mark.parametrize(
    ("entry", "status", "code"),
    [
        ({"status": 500, "message": "model melted"}, 502, "provider_error"),
        ({"status": 503, "message": "overloaded"}, 502, "provider_error"),
        ({"sleep": 2}, 504, "provider_timeout"),
        ({"status": 429, "headers": {"Retry-After": "90"}}, 429, "provider_rate_limited"),
    ],
)
async def test_upstream_failures_reach_the_sdk_with_their_fix(
    tmp_path: Path,
    shared_embedder: Any,
    fake: FakeUpstream,
    entry: dict[str, Any],
    status: int,
    code: str,
) -> None:
    async with chat_service(tmp_path, shared_embedder, fake, llm={"timeout_s": 0.5}) as service:
        client = service.client(**scoped())
        for stream in (False, True):
            fake.reply(entry)
            with pytest.raises(openai.APIStatusError) as raised:
                await client.chat.completions.create(
                    model="fake-model", messages=ASK, stream=stream
                )
            inner = assert_openai_error(raised.value, status, code)
            expected = "rate_limit_error" if status == 429 else "server_error"
            assert inner["type"] == expected
            if "message" in entry:
                assert entry["message"] in str(raised.value)


async def test_no_upstream_is_503_and_the_sdk_shows_which_setting_to_set(
    tmp_path: Path, shared_embedder: Any
) -> None:
    async with chat_service(tmp_path, shared_embedder, None) as service:
        client = service.client(**scoped())
        with pytest.raises(openai.InternalServerError) as raised:
            await client.chat.completions.create(model="fake-model", messages=ASK)
        assert_openai_error(raised.value, 503, "provider_not_configured")
        assert "NMAFC_LLM_BASE_URL" in str(raised.value)
        with pytest.raises(openai.InternalServerError) as listing:
            await client.models.list()
        assert_openai_error(listing.value, 503, "provider_not_configured")


async def test_unknown_chat_paths_are_404_and_wrong_methods_405_in_the_openai_shape(
    service: ChatService,
) -> None:
    client = service.client()
    with pytest.raises(openai.NotFoundError) as model:
        await client.models.retrieve("fake-model")  # GET /v1/models/{id}: not proxied
    inner = assert_openai_error(model.value, 404, "route_not_found")
    assert inner["type"] == "not_found_error"
    with pytest.raises(openai.NotFoundError) as other:
        await client.post("/chat/nothing", cast_to=httpx.Response, body={})
    assert_openai_error(other.value, 404, "route_not_found")
    with pytest.raises(openai.APIStatusError) as method:
        await client.get("/chat/completions", cast_to=httpx.Response)
    assert_openai_error(method.value, 405, "method_not_allowed")
    assert method.value.response.headers["allow"] == "POST"


async def test_an_oversized_chat_body_is_413_in_the_openai_shape(
    tmp_path: Path, shared_embedder: Any, fake: FakeUpstream
) -> None:
    limits = {"server": {"max_body_bytes": 2048}}
    async with chat_service(tmp_path, shared_embedder, fake, **limits) as service:
        client = service.client(**scoped())
        big = [{"role": "user", "content": "x" * 5000}]
        with pytest.raises(openai.APIStatusError) as raised:
            await client.chat.completions.create(model="fake-model", messages=big)
        assert_openai_error(raised.value, 413, "payload_too_large")
        assert not fake.chat_requests


async def test_an_upstream_failure_mid_stream_reaches_the_sdk_with_its_fix(
    tmp_path: Path, shared_embedder: Any, fake: FakeUpstream
) -> None:
    # The upstream sends one piece, then holds the rest past NMAFC's upstream timeout.
    async with chat_service(tmp_path, shared_embedder, fake, llm={"timeout_s": 0.5}) as service:
        fake.reply({"chunks": ["Porto", " is"], "gate": True})
        client = service.client(**scoped())
        stream = await client.chat.completions.create(model="fake-model", messages=ASK, stream=True)
        pieces: list[str] = []

        async def read() -> None:
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    pieces.append(chunk.choices[0].delta.content)

        with pytest.raises(openai.APIError) as raised:
            await read()
        fake.release()
        assert pieces == ["Porto"]
        assert raised.value.code == "provider_timeout"
        assert "Fix: Retry, or raise NMAFC_LLM_TIMEOUT_S" in str(raised.value)
        assert not service.state.engine.queue.pending(SCOPE)  # nothing half-said is kept

"""Errors are problem+json with a fix and a request id; client input never yields a 500."""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from nmafc.cli.main import error_catalogue

from .conftest import Running, serve, service_settings
from .proxy import TcpProxy

pytestmark = pytest.mark.anyio
A = {"X-Agent-ID": "agent-a"}
PROBLEM_FIELDS = {"type", "title", "status", "detail", "fix", "code", "request_id"}


def assert_problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert PROBLEM_FIELDS <= set(body)
    assert (body["status"], body["code"], body["type"]) == (status, code, f"urn:nmafc:error:{code}")
    assert body["fix"]
    assert body["request_id"] == response.headers["x-request-id"]
    return body


async def test_validation_errors_are_422_with_the_field_named(running: Running) -> None:
    response = await running.http.post("/v1/memories/search", json={"query": ""}, headers=A)
    body = assert_problem(response, 422, "request_validation_failed")
    assert body["errors"][0]["loc"] == ["body", "query"]


async def test_blank_text_is_refused_by_the_schema(running: Running) -> None:
    response = await running.http.post(
        "/v1/memories", json={"messages": [{"content": "   "}]}, headers=A
    )
    body = assert_problem(response, 422, "request_validation_failed")
    assert body["errors"][0]["loc"][-1] == "content"


async def test_rules_beyond_the_schema_keep_their_own_code(running: Running) -> None:
    response = await running.http.get("/v1/stats")  # an open service must be told the agent
    assert_problem(response, 422, "invalid_scope")


async def test_a_bad_agent_header_is_422(running: Running) -> None:
    response = await running.http.get("/v1/stats", headers={"X-Agent-ID": "a/b"})
    assert_problem(response, 422, "request_validation_failed")


async def test_unknown_routes_and_methods(running: Running) -> None:
    assert_problem(await running.http.get("/v2/nothing"), 404, "route_not_found")
    assert_problem(await running.http.put("/v1/memories", headers=A), 405, "method_not_allowed")


async def test_a_declared_oversized_body_is_413_before_it_is_read(
    tmp_path: Path, shared_embedder: Any
) -> None:
    settings = service_settings(tmp_path, server={"max_body_bytes": 2048})
    async with serve(settings, shared_embedder) as app:
        big = {"messages": [{"content": "x" * 5000}]}
        assert_problem(await app.http.post("/v1/memories", json=big, headers=A), 413,
                       "payload_too_large")  # fmt: skip

        async def chunks():  # type: ignore[no-untyped-def]
            for _ in range(10):
                yield b"x" * 1000  # no Content-Length: the limit applies while streaming

        response = await app.http.post("/v1/memories", content=chunks(), headers=A)
        assert_problem(response, 413, "payload_too_large")
        small = await app.http.post("/v1/memories", json={"messages": [{"content": "ok"}]},
                                    headers=A)  # fmt: skip
        assert small.status_code == 201


async def test_a_given_request_id_is_echoed(running: Running) -> None:
    path = f"/v1/memories/{uuid.uuid4()}"
    response = await running.http.get(path, headers={**A, "X-Request-ID": "abc-1"})
    body = assert_problem(response, 404, "memory_not_found")
    assert body["request_id"] == "abc-1"


@pytest.mark.parametrize(
    "body",
    [
        {"messages": [{"content": "nul \u0000 byte"}]},
        b'{"messages": [{"content": "lone \\ud800 surrogate"}]}',
        {"messages": [{"content": "far future", "timestamp": "9999-12-31T23:59:59-14:00"}]},
        {"messages": [{"content": "far past", "timestamp": "0001-01-01T00:00:00+14:00"}]},
        {"facts": [{"content": "a client vector", "vector": [0.0] * 384}]},
        {"messages": [{"content": "null speaker", "speaker": None}]},
    ],
)
async def test_hostile_input_is_a_4xx_never_a_500(running: Running, body: Any) -> None:
    if isinstance(body, bytes):
        headers = {**A, "Content-Type": "application/json"}
        response = await running.http.post("/v1/memories", content=body, headers=headers)
    else:
        response = await running.http.post("/v1/memories", json=body, headers=A)
    assert 400 <= response.status_code < 500, response.text


@pytest.mark.parametrize(
    "query",
    [{"as_of": 1e300}, {"as_of": 0}, {"as_of": "2020-01-01T00:00:00Z"}, {"budget_tokens": 1}],
)
async def test_odd_but_valid_searches_answer(running: Running, query: dict[str, Any]) -> None:
    response = await running.http.post(
        "/v1/memories/search", json={"query": "anything", **query}, headers=A
    )
    assert response.status_code == 200, response.text


@pytest.mark.postgres
async def test_an_unreachable_database_is_503_with_retry_after(
    tmp_path: Path, shared_embedder: Any, postgres_uri: str
) -> None:
    proxy = TcpProxy(5432)
    via_proxy = postgres_uri.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    settings = service_settings(
        tmp_path, via_proxy, server={"retry_after_s": 7}, cold={"uri": via_proxy,
                                                                 "connect_timeout_s": 1}
    )  # fmt: skip
    async with serve(settings, shared_embedder) as app:
        ok = await app.http.post("/v1/memories", json={"messages": [{"content": "hi"}]}, headers=A)
        assert ok.status_code == 201
        assert (await app.http.get("/readyz")).status_code == 200
        proxy.cut()
        for response in (
            await app.http.get("/v1/memories", headers=A),
            await app.http.post("/v1/memories/search", json={"query": "hi"}, headers=A),
            await app.http.get("/readyz"),
        ):
            assert_problem(response, 503, "store_unavailable")
            assert response.headers["retry-after"] == "7"
        assert (await app.http.get("/healthz")).status_code == 200


def test_the_documented_error_catalogue_is_generated_from_the_code() -> None:
    catalogue = (Path(__file__).parents[2] / "docs" / "errors.md").read_text()
    match = re.search(r"<!-- errors:start -->\n(.*?)\n<!-- errors:end -->", catalogue, re.S)
    assert match, "docs/errors.md lacks the generated error catalogue"
    assert match.group(1).strip() == error_catalogue().strip(), "run: nmafc errors"


async def test_undeclared_query_parameters_are_422(running: Running) -> None:
    response = await running.http.get("/v1/memories?limit=1&bogus=1", headers=A)
    body = assert_problem(response, 422, "invalid_input")
    assert "bogus" in body["detail"]


async def test_405_lists_exactly_the_documented_methods(running: Running) -> None:
    response = await running.http.get("/v1/memories/search", headers=A)
    assert_problem(response, 405, "method_not_allowed")
    assert response.headers["allow"] == "POST"
    response = await running.http.put("/v1/memories", headers=A)
    assert response.headers["allow"] == "DELETE, GET, POST"

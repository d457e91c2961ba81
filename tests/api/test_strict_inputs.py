"""Input is read as the schema says: JSON booleans, UTF-8 text, real times, real ids.

Each case here was accepted silently (or answered 500, or "No such route") before; the
rules are in ``nmafc/wire/base.py`` and ``nmafc/api/bodies.py``.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest

from .conftest import Running
from .test_errors import assert_problem

pytestmark = pytest.mark.anyio
A = {"X-Agent-ID": "agent-a", "X-Conversation-ID": "strict"}
JSON = {**A, "Content-Type": "application/json"}
SAID = "2023-05-08T13:56:00Z"


async def fact_id(running: Running) -> str:
    added = await running.http.post(
        "/v1/memories", json={"facts": [{"content": "Jon plays chess."}]}, headers=A
    )
    assert added.status_code == 201, added.text
    return str(added.json()["added"][0]["id"])


async def turns(running: Running) -> int:
    stats = await running.http.get("/v1/stats", headers=A)
    return int(stats.json()["turns"])


# -- booleans are JSON booleans ---------------------------------------------------------


@pytest.mark.parametrize("field", ["include_invalidated", "include_archived", "reinforce"])
@pytest.mark.parametrize("value", ["false", "no", 0, "0", 1, "true"])
async def test_a_search_flag_that_is_not_a_json_boolean_is_422_naming_it(
    running: Running, field: str, value: Any
) -> None:
    body = {"query": "chess", field: value}
    response = await running.http.post("/v1/memories/search", json=body, headers=A)
    problem = assert_problem(response, 422, "request_validation_failed")
    assert problem["errors"][0]["loc"] == ["body", field]


@pytest.mark.parametrize("value", ["yes", "no", "1", "0", "on", "maybe", "TRUE", ""])
async def test_a_query_flag_takes_only_true_or_false(running: Running, value: str) -> None:
    response = await running.http.get(
        "/v1/memories", params={"include_invalidated": value}, headers=A
    )
    problem = assert_problem(response, 422, "request_validation_failed")
    assert problem["errors"][0]["loc"] == ["query", "include_invalidated"]
    assert "true or false" in problem["detail"]


async def test_query_flags_true_and_false_still_work(running: Running) -> None:
    record = await fact_id(running)
    await running.http.delete(f"/v1/memories/{record}", headers=A)
    for value, expected in (("true", [record]), ("false", [])):
        page = await running.http.get(
            "/v1/memories", params={"include_invalidated": value}, headers=A
        )
        assert page.status_code == 200, page.text
        assert [m["id"] for m in page.json()["items"]] == expected


# -- text is UTF-8 JSON without lone surrogates ----------------------------------------


async def surrogate_cases(running: Running) -> list[tuple[str, str, str, list[Any]]]:
    """(method, path, raw JSON with a lone surrogate escape, the location to name)."""
    record = await fact_id(running)
    return [
        ("POST", "/v1/memories", r'{"messages": [{"content": "x \ud800"}]}',
         ["body", "messages", 0, "content"]),
        ("POST", "/v1/memories", r'{"facts": [{"content": "ok", "entity": "\udfff"}]}',
         ["body", "facts", 0, "entity"]),
        ("POST", "/v1/memories/search", r'{"query": "where \ud83d is it"}', ["body", "query"]),
        ("PATCH", f"/v1/memories/{record}", r'{"content": "\ud800"}', ["body", "content"]),
        ("POST", "/v1/memories/rollback", r'{"to_turn": 0, "\ud800": 1}', ["body", "\\ud800"]),
    ]  # fmt: skip


async def test_a_lone_surrogate_is_422_on_every_route_with_a_body(running: Running) -> None:
    for method, path, raw, where in await surrogate_cases(running):
        before = await turns(running)
        response = await running.http.request(method, path, content=raw.encode(), headers=JSON)
        problem = assert_problem(response, 422, "request_validation_failed")
        assert problem["errors"][0]["loc"] == where, (path, problem)
        assert "surrogate" in problem["detail"], problem
        assert await turns(running) == before


async def test_an_escaped_backslash_before_u_is_text_not_a_surrogate(running: Running) -> None:
    raw = r'{"messages": [{"content": "a path: C:\\ud800"}]}'
    response = await running.http.post("/v1/memories", content=raw.encode(), headers=JSON)
    assert response.status_code == 201, response.text
    assert response.json()["turns"][0]["content"] == "a path: C:\\ud800"


async def test_a_surrogate_pair_is_one_character_and_welcome(running: Running) -> None:
    raw = r'{"messages": [{"content": "a smile \ud83d\ude00"}]}'
    response = await running.http.post("/v1/memories", content=raw.encode(), headers=JSON)
    assert response.status_code == 201, response.text
    assert response.json()["turns"][0]["content"] == "a smile \U0001f600"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'\xef\xbb\xbf{"messages": [{"content": "bom"}]}', "byte-order mark"),
        ('{"messages": [{"content": "utf16"}]}'.encode("utf-16"), "UTF-16"),
        ('{"messages": [{"content": "utf16"}]}'.encode("utf-16-be"), "UTF-16"),
        ('{"messages": [{"content": "utf32"}]}'.encode("utf-32"), "UTF-16"),
        ('{"messages": [{"content": "café"}]}'.encode("latin-1"), "not valid UTF-8"),
        (b'{"messages": [{"content": "cesu \xed\xa0\x80"}]}', "not valid UTF-8"),
    ],
)
async def test_a_body_that_is_not_utf8_is_415_naming_the_fix(
    running: Running, body: bytes, said: str
) -> None:
    response = await running.http.post("/v1/memories", content=body, headers=JSON)
    problem = assert_problem(response, 415, "body_not_utf8")
    assert said in problem["detail"]
    assert "UTF-8" in problem["fix"]
    assert await turns(running) == 0


async def test_a_charset_other_than_utf8_is_415(running: Running) -> None:
    body = json.dumps({"messages": [{"content": "hi"}]}).encode()
    headers = {**A, "Content-Type": "application/json; charset=iso-8859-1"}
    response = await running.http.post("/v1/memories", content=body, headers=headers)
    problem = assert_problem(response, 415, "body_not_utf8")
    assert "iso-8859-1" in problem["detail"]
    utf8 = {**A, "Content-Type": "application/json; charset=UTF-8"}
    ok = await running.http.post("/v1/memories", content=body, headers=utf8)
    assert ok.status_code == 201, ok.text


# -- times ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "timestamp",
    [-1, 0, 1700000000, "-1", "1700000000", "1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z",
     "9000-01-01T00:00:00Z", True, "yesterday"],
)  # fmt: skip
async def test_a_timestamp_is_an_iso_time_from_1970_on(running: Running, timestamp: Any) -> None:
    body = {"messages": [{"content": "when was this?", "timestamp": timestamp}]}
    response = await running.http.post("/v1/memories", json=body, headers=A)
    problem = assert_problem(response, 422, "request_validation_failed")
    assert ["messages", 0, "timestamp"] == problem["errors"][0]["loc"][2:5]
    assert await turns(running) == 0


@pytest.mark.parametrize(
    ("timestamp", "stored"),
    [
        ("1970-01-01T00:00:00Z", datetime(1970, 1, 1, tzinfo=UTC)),
        ("2023-05-08T15:56:00+02:00", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08T13:56:00", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),  # no offset: UTC
        ("2023-05-08", datetime(2023, 5, 8, tzinfo=UTC)),
    ],
)
async def test_iso_timestamps_are_stored_in_utc(
    running: Running, timestamp: str, stored: datetime
) -> None:
    body = {"messages": [{"content": "dated", "timestamp": timestamp}]}
    response = await running.http.post("/v1/memories", json=body, headers=A)
    assert response.status_code == 201, response.text
    said = datetime.fromisoformat(response.json()["turns"][0]["occurred_at"])
    assert said == stored


@pytest.mark.parametrize("as_of", [-1, -0.5, "-1", "1969-12-31T23:59:59Z", True])
async def test_as_of_is_a_turn_from_0_or_an_iso_time_from_1970(
    running: Running, as_of: Any
) -> None:
    response = await running.http.post(
        "/v1/memories/search", json={"query": "anything", "as_of": as_of}, headers=A
    )
    problem = assert_problem(response, 422, "request_validation_failed")
    assert problem["errors"][0]["loc"][:2] == ["body", "as_of"]


async def test_an_undated_message_takes_the_time_of_the_one_before_it(running: Running) -> None:
    body = {
        "messages": [
            {"content": "I adopted a cat.", "timestamp": SAID},
            {"role": "assistant", "content": "What is its name?"},
            {"content": "Miso.", "timestamp": "2023-05-09T08:00:00Z"},
            {"role": "assistant", "content": "Lovely name."},
        ]
    }
    response = await running.http.post("/v1/memories", json=body, headers=A)
    assert response.status_code == 201, response.text
    said = [datetime.fromisoformat(t["occurred_at"]) for t in response.json()["turns"]]
    first, second = datetime(2023, 5, 8, 13, 56, tzinfo=UTC), datetime(2023, 5, 9, 8, tzinfo=UTC)
    assert said == [first, first, second, second]


async def test_undated_messages_before_any_dated_one_are_dated_now(running: Running) -> None:
    before = datetime.now(UTC)
    body = {"messages": [{"content": "Hello."}, {"content": "Later.", "timestamp": SAID}]}
    response = await running.http.post("/v1/memories", json=body, headers=A)
    said = [datetime.fromisoformat(t["occurred_at"]) for t in response.json()["turns"]]
    assert said[0] >= before
    assert said[1] == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


# -- ids --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("GET", ""), ("PATCH", ""), ("DELETE", ""), ("GET", "/history")],
)
@pytest.mark.parametrize("malformed", ["not-a-uuid", "12345", "3f2a"])
async def test_a_malformed_memory_id_is_404_memory_not_found_naming_the_format(
    running: Running, method: str, suffix: str, malformed: str
) -> None:
    body = {"tier": "CoreAnchor"} if method == "PATCH" else None
    response = await running.http.request(
        method, f"/v1/memories/{malformed}{suffix}", json=body, headers=A
    )
    problem = assert_problem(response, 404, "memory_not_found")
    assert malformed in problem["detail"]
    assert "UUID" in problem["fix"]


async def test_other_paths_under_memories_stay_routing_errors(running: Running) -> None:
    assert_problem(await running.http.get("/v1/memories/x/y", headers=A), 404, "route_not_found")
    assert_problem(await running.http.post("/v1/memories/x", headers=A), 404, "route_not_found")
    search = await running.http.get("/v1/memories/search", headers=A)
    assert_problem(search, 405, "method_not_allowed")
    unknown = await running.http.get(f"/v1/memories/{uuid.uuid4()}", headers=A)
    assert_problem(unknown, 404, "memory_not_found")


async def test_a_tier_only_patch_keeps_the_old_tier_in_the_history(running: Running) -> None:
    record = await fact_id(running)
    patched = await running.http.patch(
        f"/v1/memories/{record}", json={"tier": "CoreAnchor"}, headers=A
    )
    assert patched.status_code == 200, patched.text
    history = (await running.http.get(f"/v1/memories/{record}/history", headers=A)).json()
    update = history["events"][-1]
    assert update["kind"] == "update"
    assert update["detail"]["tier"] == "CoreAnchor"
    assert update["detail"]["previous_tier"] == "ActiveContext"

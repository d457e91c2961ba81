"""The load generator's keep-alive client against a real socket server on loopback."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import pytest

from nmafc.bench.wire import KeepAliveConnection, WireError

Reply = Callable[[dict[str, object]], bytes]


async def _serve(reply: Reply, seen: list[tuple[str, dict[str, str]]]) -> asyncio.Server:
    """An HTTP/1.1 server that answers each request with ``reply(body)``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode()
                request_line, *lines = head.split("\r\n")
                headers = {
                    k.strip().lower(): v.strip()
                    for k, _, v in (line.partition(":") for line in lines if line)
                }
                body = json.loads(await reader.readexactly(int(headers["content-length"])))
                seen.append((request_line, headers))
                writer.write(reply(body))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def _ok(body: dict[str, object]) -> bytes:
    payload = json.dumps({"echo": body}).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(payload), payload)


def _run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 20))


def test_requests_share_one_connection_and_carry_every_header() -> None:
    async def test() -> None:
        seen: list[tuple[str, dict[str, str]]] = []
        server = await _serve(_ok, seen)
        port = server.sockets[0].getsockname()[1]
        connection = KeepAliveConnection(f"http://127.0.0.1:{port}", {"Authorization": "Bearer k"})
        try:
            for i in range(3):
                status, body = await connection.post_json("/v1/x", {"i": i}, {"X-Agent-ID": "a"})
                assert status == 200
                assert json.loads(body) == {"echo": {"i": i}}
        finally:
            await connection.close()
            server.close()
        assert [line for line, _ in seen] == ["POST /v1/x HTTP/1.1"] * 3
        assert all(h["authorization"] == "Bearer k" and h["x-agent-id"] == "a" for _, h in seen)
        assert seen[0][1]["content-type"] == "application/json"

    _run(test)


def test_a_chunked_reply_is_an_error_and_the_next_request_reconnects() -> None:
    replies = iter(
        [
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            _ok({}),
        ]
    )

    async def test() -> None:
        server = await _serve(lambda body: next(replies), [])
        port = server.sockets[0].getsockname()[1]
        connection = KeepAliveConnection(f"http://127.0.0.1:{port}", {})
        try:
            with pytest.raises(WireError, match="chunked"):
                await connection.post_json("/", {})
            status, _ = await connection.post_json("/", {})
            assert status == 200
        finally:
            await connection.close()
            server.close()

    _run(test)


def test_a_kept_alive_connection_the_server_closed_is_reopened_once() -> None:
    async def test() -> None:
        connections = 0

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal connections
            connections += 1
            head = (await reader.readuntil(b"\r\n\r\n")).decode()
            length = int(head.lower().split("content-length:")[1].split("\r\n")[0])
            await reader.readexactly(length)
            writer.write(_ok({}))
            await writer.drain()
            writer.close()  # the server's idle timeout, right after answering

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        connection = KeepAliveConnection(f"http://127.0.0.1:{port}", {})
        try:
            for _ in range(3):
                status, _ = await connection.post_json("/", {})
                assert status == 200
        finally:
            await connection.close()
            server.close()
        assert connections == 3

    _run(test)


def test_a_refused_connection_is_a_wire_error() -> None:
    async def test() -> None:
        server = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        server.close()
        await server.wait_closed()
        with pytest.raises(WireError):
            await KeepAliveConnection(f"http://127.0.0.1:{port}", {}).post_json("/", {})

    _run(test)


def test_only_plain_http_urls_are_accepted() -> None:
    with pytest.raises(ValueError, match="http://host:port"):
        KeepAliveConnection("https://example.org", {})

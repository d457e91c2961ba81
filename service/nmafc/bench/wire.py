"""A lean HTTP/1.1 keep-alive client for load generation.

On a 2-core machine the load generator shares the cores with the server it measures, so
every millisecond the client spends per request is taken from the server. httpx costs
≈ 2.4 ms of CPU per request here (more than the server spends answering a search of an
empty scope); writing the request bytes and reading one ``Content-Length`` response off a
socket costs a small fraction of that. One connection per closed-loop client, as a
browser or SDK with keep-alive would hold.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlsplit


class WireError(Exception):
    """The connection failed or the response was not HTTP/1.1 with a Content-Length."""


class KeepAliveConnection:
    """One persistent connection; requests on it run one at a time."""

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"only http://host:port URLs are supported, got {url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        self._fixed = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self._fixed += f"Host: {self.host}:{self.port}\r\n"
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def post_json(
        self, path: str, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> tuple[int, bytes]:
        """POST ``body`` as JSON; the status and the response body."""
        payload = json.dumps(body).encode()
        extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        head = (
            f"POST {path} HTTP/1.1\r\n{self._fixed}{extra}"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n\r\n"
        )
        request = head.encode() + payload
        reused = self._writer is not None
        try:
            try:
                return await self._exchange(request)
            except (ConnectionError, asyncio.IncompleteReadError) as error:
                # A kept-alive connection the server closed while idle fails before any
                # byte of a response: send once more on a new one, as HTTP clients do.
                partial = getattr(error, "partial", b"")
                if not reused or partial:
                    raise
                await self.close()
                return await self._exchange(request)
        except (OSError, asyncio.IncompleteReadError, WireError) as error:
            await self.close()
            raise WireError(str(error) or type(error).__name__) from error

    async def _exchange(self, request: bytes) -> tuple[int, bytes]:
        if self._writer is None:
            self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        assert self._reader is not None
        self._writer.write(request)
        return await self._response(self._reader)

    async def _response(self, reader: asyncio.StreamReader) -> tuple[int, bytes]:
        lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = lines[0].split(" ", 2)
        if len(status) < 2 or not status[0].startswith("HTTP/1."):
            raise WireError(f"not an HTTP/1.x status line: {lines[0]!r}")
        length = None
        closing = False
        for line in lines[1:]:
            name, _, value = line.partition(":")
            name = name.strip().lower()
            if name == "content-length":
                length = int(value.strip())
            elif name == "transfer-encoding":
                raise WireError("chunked responses are not supported by this client")
            elif name == "connection" and value.strip().lower() == "close":
                closing = True
        if length is None:
            raise WireError("response without Content-Length")
        body = await reader.readexactly(length)
        if closing:
            await self.close()
        return int(status[1]), body

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass

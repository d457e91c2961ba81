"""Clients that misbehave on purpose, over raw sockets: the abuse suite's tools."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Event,
    Request,
    TextMessage,
)


def closed_after(sock: socket.socket, limit_s: float) -> tuple[bytes, float]:
    """Read until the server closes; what it sent and how long it took (limit: a failure)."""
    sock.settimeout(limit_s)
    started, said = time.monotonic(), b""
    while True:
        try:
            chunk = sock.recv(65536)
        except TimeoutError as exc:
            raise AssertionError(f"still open after {limit_s} s; it sent {said[:200]!r}") from exc
        if not chunk:
            return said, time.monotonic() - started
        said += chunk


class RawWebSocket:
    """A WebSocket client (wsproto) over a plain socket, so a test decides when it reads."""

    def __init__(self, port: int, *, receive_buffer: int | None = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:  # before connect, so the window starts small
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect(("127.0.0.1", port))
        self.sock.settimeout(30)
        self.ws = WSConnection(ConnectionType.CLIENT)
        self.sock.sendall(self.ws.send(Request(host="127.0.0.1", target="/ws/live")))
        accepted = self._next()
        assert isinstance(accepted, AcceptConnection), accepted
        self._pending: list[Event] = []

    def send_json(self, message: dict[str, Any]) -> None:
        self.sock.sendall(self.ws.send(TextMessage(data=json.dumps(message))))

    def send_bytes(self, data: bytes) -> None:
        self.sock.sendall(self.ws.send(BytesMessage(data=data)))

    def receive_json(self) -> dict[str, Any]:
        event = self._next()
        assert isinstance(event, TextMessage), event
        message: dict[str, Any] = json.loads(event.data)
        return message

    def until_closed(self, limit_s: float = 30) -> tuple[int, list[dict[str, Any]]]:
        """Read everything until the server's close frame: its code and the messages before."""
        self.sock.settimeout(limit_s)
        said: list[dict[str, Any]] = []
        while True:
            event = self._next()
            if isinstance(event, CloseConnection):
                return event.code, said
            if isinstance(event, TextMessage):
                said.append(json.loads(event.data))

    def close(self) -> None:
        self.sock.close()

    def _next(self) -> Event:
        pending = getattr(self, "_pending", [])
        while not pending:
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError("the connection was cut without a close frame")
            self.ws.receive_data(data)
            pending.extend(self.ws.events())
        self._pending = pending
        return pending.pop(0)

"""Connections that stall while sending a request's headers are closed (slowloris).

uvicorn closes an idle keep-alive connection after ``timeout_keep_alive``, but once a
client has sent a byte of a request it waits for the rest of the headers for ever: a
client that opens connections and trickles or stops mid-header holds a file descriptor
and a protocol object each, for as long as it likes. uvicorn has no header-read timeout
(0.54), so :func:`header_guarded` wraps its HTTP protocol class: a connection waiting for
headers (just opened, or after its previous response) must complete them within
``timeout_s``, else it is closed. A request whose headers arrived is not timed here (its
work has the request deadline); a connection upgraded to a WebSocket is left alone.
"""

from __future__ import annotations

import asyncio
from typing import Any


def header_guarded(protocol_class: type[asyncio.Protocol], timeout_s: float) -> type[Any]:
    """``protocol_class`` (uvicorn's h11 or httptools protocol) with a header deadline."""
    base: type[Any] = protocol_class

    class HeaderGuarded(base):  # type: ignore[misc]
        _guard: asyncio.TimerHandle | None = None
        _guarded_cycle: object = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._guard is not None:
                self._guard.cancel()
                self._guard = None
            super().connection_lost(exc)

        def _awaiting_headers(self) -> bool:
            # No request yet, or the last one is answered: the next one's headers are due.
            cycle = getattr(self, "cycle", None)
            return cycle is None or bool(getattr(cycle, "response_complete", False))

        def _arm(self) -> None:
            if self._guard is None and self._awaiting_headers():
                self._guarded_cycle = getattr(self, "cycle", None)
                self._guard = self.loop.call_later(timeout_s, self._expire)

        def _expire(self) -> None:
            self._guard = None
            transport = self.transport
            if transport is None or transport.is_closing() or transport.get_protocol() is not self:
                return  # closed already, or upgraded to a WebSocket
            if getattr(self, "cycle", None) is self._guarded_cycle:
                transport.close()  # not one request's headers completed in time
            elif self._awaiting_headers():
                self._arm()  # a request was served meanwhile; the next one gets its own time

    HeaderGuarded.__name__ = HeaderGuarded.__qualname__ = f"HeaderGuarded{protocol_class.__name__}"
    return HeaderGuarded

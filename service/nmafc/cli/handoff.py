"""Connections dealt to worker processes by their supervisor, the least busy worker first.

With ``SO_REUSEPORT`` the kernel spreads connections over the workers' sockets by a hash
of their addresses; 32 keep-alive clients landed 14 on one worker and 18 on the other,
and the second worker's clients waited a quarter longer on every request. So the
supervisor alone listens: :class:`ConnectionDealer` accepts each connection and passes
its file descriptor (``SCM_RIGHTS`` over a ``SOCK_SEQPACKET`` pair) to the worker with
the fewest open connections, and :class:`HandedConnectionsServer` serves what it is given
as if it had accepted it. No request byte passes through the supervisor.

A worker counts the connections it has finished in a shared integer, so the supervisor
knows each worker's open connections as ``handed - closed`` without asking. A worker whose
supervisor is gone sees its channel close and shuts down.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import threading
from collections.abc import Sequence
from ctypes import c_int64
from dataclasses import dataclass

import uvicorn

log = logging.getLogger("nmafc.cli")

HAND_TIMEOUT_S = 1.0  # a worker that cannot take a connection this long is skipped
# accept() failing is usually a lasting condition (EMFILE: out of file descriptors), so the
# dealer waits before trying again, doubling from the first to the last, as asyncio does.
ACCEPT_RETRY_FIRST_S = 0.01
ACCEPT_RETRY_MAX_S = 1.0
_MAX_FDS = 64
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)


@dataclass(eq=False)
class WorkerLink:
    """The supervisor's end of one worker: where its connections go, and how many it holds."""

    channel: socket.socket
    closed: c_int64  # written by the worker
    handed: int = 0

    @property
    def open(self) -> int:
        return self.handed - self.closed.value

    def close(self) -> None:
        self.channel.close()


class ConnectionDealer:
    """Accepts on ``listener`` in a thread; each connection goes to the least busy worker."""

    def __init__(self, listener: socket.socket, links: Sequence[WorkerLink]) -> None:
        self.listener = listener
        self._links = list(links)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="nmafc-dealer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def replace(self, index: int, link: WorkerLink) -> None:
        """A restarted worker's link takes the place of its predecessor's."""
        with self._lock:
            old, self._links[index] = self._links[index], link
        old.close()

    def stop(self) -> None:
        """Accept nothing more; connections already handed stay with their workers."""
        self._stopping.set()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        except OSError:
            pass
        self._thread.join(timeout=5)
        for link in self._links:
            link.close()

    def _accept(self) -> None:
        failures = 0
        while not self._stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError as exc:
                if self._stopping.is_set():
                    return
                failures += 1
                wait = min(ACCEPT_RETRY_MAX_S, ACCEPT_RETRY_FIRST_S * 2 ** min(failures - 1, 16))
                fix = (
                    " (raise the open-file limit, `ulimit -n`, or serve fewer connections)"
                    if exc.errno in _OUT_OF_DESCRIPTORS
                    else ""
                )
                log.warning(
                    "accepting a connection failed (%d in a row, next try in %.2f s): %s%s",
                    failures, wait, exc, fix,
                )  # fmt: skip
                self._stopping.wait(wait)
                continue
            if failures:
                log.warning("accepting connections again after %d failures", failures)
                failures = 0
            with connection:  # the worker holds its own copy once handed
                self._deal(connection)

    def _deal(self, connection: socket.socket) -> None:
        with self._lock:
            ranked = sorted(self._links, key=lambda link: (link.open, link.handed))
            for link in ranked:
                try:
                    socket.send_fds(link.channel, [b"c"], [connection.fileno()])
                except OSError:
                    continue  # that worker is gone or stuck; its replacement gets a new link
                link.handed += 1
                return
        log.warning("no worker could take a connection; it was closed")


def link_pair(closed: c_int64) -> tuple[WorkerLink, socket.socket]:
    """A link for the supervisor and the channel end its worker receives connections on."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ours.settimeout(HAND_TIMEOUT_S)
    return WorkerLink(ours, closed), theirs


class HandedConnectionsServer(uvicorn.Server):
    """A uvicorn server that listens on nothing and serves the connections it is handed."""

    def __init__(self, config: uvicorn.Config, channel: socket.socket, closed: c_int64) -> None:
        super().__init__(config)
        self.channel = channel
        self.closed = closed
        self.received = 0

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])
        if self.should_exit:
            return
        self.channel.setblocking(False)
        asyncio.get_running_loop().add_reader(self.channel.fileno(), self._take)

    def _take(self) -> None:
        try:
            _, fds, _, _ = socket.recv_fds(self.channel, 1, _MAX_FDS)
        except BlockingIOError:
            return
        except OSError:
            fds = []
        if not fds:  # the supervisor is gone: nobody will hand us more, nor stop us
            self._stop_taking()
            self.should_exit = True
            return
        loop = asyncio.get_running_loop()
        for fd in fds:
            connection = socket.socket(fileno=fd)
            self.received += 1
            if self.should_exit:
                connection.close()
                continue
            loop.create_task(loop.connect_accepted_socket(self._protocol, connection))

    def _protocol(self) -> asyncio.Protocol:
        # What uvicorn's own listener builds for each connection it accepts.
        return self.config.http_protocol_class(  # type: ignore[call-arg]
            config=self.config, server_state=self.server_state, app_state=self.lifespan.state
        )

    async def on_tick(self, counter: int) -> bool:
        self.closed.value = self.received - len(self.server_state.connections)
        return await super().on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self._stop_taking()
        await super().shutdown(sockets=sockets)

    def _stop_taking(self) -> None:
        if self.channel.fileno() != -1:
            asyncio.get_running_loop().remove_reader(self.channel.fileno())
            self.channel.close()

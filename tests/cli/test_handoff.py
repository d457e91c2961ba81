"""The supervisor deals connections to the least busy worker, which serves them as its own."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from ctypes import c_int64
from typing import Any

import httpx
import pytest
import uvicorn

from nmafc.cli.handoff import ConnectionDealer, HandedConnectionsServer, link_pair


class Worker:
    """A stand-in worker process: the channel end a real worker would read connections from."""

    def __init__(self) -> None:
        self.closed = c_int64(0)
        self.link, self.channel = link_pair(self.closed)
        self.channel.settimeout(5)

    def take(self) -> socket.socket:
        _, fds, _, _ = socket.recv_fds(self.channel, 1, 4)
        assert len(fds) == 1
        return socket.socket(fileno=fds[0])

    def pending(self) -> int:
        """How many connections wait in the channel, taking them."""
        taken = 0
        self.channel.settimeout(0.3)
        try:
            while True:
                self.take().close()
                taken += 1
        except TimeoutError:
            return taken
        finally:
            self.channel.settimeout(5)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        yield sock


def _connect(listener: socket.socket, n: int) -> list[socket.socket]:
    return [socket.create_connection(listener.getsockname()) for _ in range(n)]


def test_connections_are_spread_evenly_then_go_to_the_worker_with_fewest_open(
    listener: socket.socket,
) -> None:
    a, b = Worker(), Worker()
    dealer = ConnectionDealer(listener, [a.link, b.link])
    dealer.start()
    clients = _connect(listener, 8)
    try:
        assert (a.pending(), b.pending()) == (4, 4)
        a.closed.value = 3  # a has finished three of its four
        clients += _connect(listener, 3)
        assert (a.pending(), b.pending()) == (3, 0)
        assert (a.link.open, b.link.open) == (4, 4)
    finally:
        dealer.stop()
        for client in clients:
            client.close()


def test_the_worker_gets_the_client_connection_itself(listener: socket.socket) -> None:
    worker = Worker()
    dealer = ConnectionDealer(listener, [worker.link])
    dealer.start()
    try:
        with _connect(listener, 1)[0] as client:
            with worker.take() as served:
                client.sendall(b"ping")
                assert served.recv(4) == b"ping"
                served.sendall(b"pong")
                assert client.recv(4) == b"pong"
    finally:
        dealer.stop()


def test_a_worker_that_is_gone_is_skipped_and_its_replacement_is_dealt_to(
    listener: socket.socket,
) -> None:
    gone, alive = Worker(), Worker()
    gone.channel.close()
    dealer = ConnectionDealer(listener, [gone.link, alive.link])
    dealer.start()
    clients = _connect(listener, 3)
    try:
        assert alive.pending() == 3
        replacement = Worker()
        dealer.replace(0, replacement.link)
        clients += _connect(listener, 2)
        assert (replacement.pending(), alive.pending()) == (2, 0)
        assert gone.link.channel.fileno() == -1  # the old link was closed
    finally:
        dealer.stop()
        for client in clients:
            client.close()


def test_stop_refuses_new_connections(listener: socket.socket) -> None:
    worker = Worker()
    dealer = ConnectionDealer(listener, [worker.link])
    dealer.start()
    dealer.stop()
    assert not dealer._thread.is_alive()
    assert worker.link.channel.fileno() == -1


async def _hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello"})


def test_a_worker_serves_handed_connections_and_exits_when_its_supervisor_is_gone(
    listener: socket.socket,
) -> None:
    closed = c_int64(0)
    link, channel = link_pair(closed)
    config = uvicorn.Config(_hello, log_config=None, access_log=False, lifespan="on")
    server = HandedConnectionsServer(config, channel, closed)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    dealer = ConnectionDealer(listener, [link])
    dealer.start()
    host, port = listener.getsockname()
    try:
        for _ in range(2):  # a fresh connection each time, each one handed over
            with httpx.Client(base_url=f"http://{host}:{port}", timeout=10) as http:
                assert http.get("/").text == "hello"
        assert link.handed == 2
        deadline = time.monotonic() + 5
        while closed.value < 2 and time.monotonic() < deadline:  # counted at the next tick
            time.sleep(0.1)
        assert closed.value == 2
        assert link.open == 0
    finally:
        dealer.stop()  # closes the supervisor's end of the channel
    thread.join(timeout=15)
    assert not thread.is_alive(), "the worker kept running without its supervisor"


_OUT_OF_DESCRIPTORS = textwrap.dedent(
    """
    import logging, resource, socket, sys, time
    from ctypes import c_int64
    from nmafc.cli.handoff import ConnectionDealer, link_pair

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s")
    listener = socket.create_server(("127.0.0.1", 0))
    link, theirs = link_pair(c_int64(0))
    dealer = ConnectionDealer(listener, [link])
    clients = [socket.create_connection(listener.getsockname()) for _ in range(3)]
    # Leave accept() no descriptor: lower the limit, then take every one still free.
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
    hog = []
    try:
        while True:
            hog.append(socket.socket())
    except OSError:
        pass
    dealer.start()
    time.sleep(1.5)
    for held in hog:
        held.close()
    theirs.settimeout(5)
    handed = [socket.recv_fds(theirs, 1, 1) for _ in clients]
    dealer.stop()
    print(len(handed))
    """
)


def test_the_dealer_waits_between_attempts_while_out_of_descriptors() -> None:
    # In a child process: it lowers its own open-file limit.
    done = subprocess.run(
        [sys.executable, "-c", _OUT_OF_DESCRIPTORS],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    failures = [line for line in done.stderr.splitlines() if "a connection failed" in line]

    # Waits doubling from 10 ms: about 8 attempts in 1.5 s, where the loop without them
    # tried (and logged) 146,201 times here.
    assert 3 <= len(failures) <= 15
    assert "ulimit -n" in failures[0]
    assert "accepting connections again" in done.stderr
    assert done.stdout.split() == ["3"]  # the queued clients were dealt once it could

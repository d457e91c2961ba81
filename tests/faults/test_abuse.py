"""Abuse of a real ``nmafc serve``: floods, stalls, oversized and slow bodies, bad frames.

One server for the module (its limits lowered so each abuse shows in seconds): a tenant
flooding agent-wide searches cannot stall another tenant's searches, a connection that
stalls in its headers or idles is closed, a body over the limit is refused before it is
read and one that trickles is cut at the deadline, a WebSocket that sends a binary frame
is closed with 1003 and one that stops reading with 1013, never with a server-side error.
"""

from __future__ import annotations

import socket
import statistics
import threading
import time
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest

from nmafc.testing.processes import NmafcProcess

from .abusers import RawWebSocket, closed_after
from .conftest import VERBATIM

pytestmark = pytest.mark.faults
HEADER_TIMEOUT_S = 1.0
KEEP_ALIVE_S = 1
REQUEST_TIMEOUT_S = 8.0
AGENT_MAX_CONCURRENT = 3
FLOODERS = 8
FLOODER = {"X-Agent-ID": "flooder"}
VICTIM = {"X-Agent-ID": "victim", "X-Conversation-ID": "c1"}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NmafcProcess]:
    root = tmp_path_factory.mktemp("abuse")
    env = {
        **VERBATIM,
        "NMAFC_DATA_DIR": str(root / "data"),
        "NMAFC_HOT_PRELOAD_SCOPES": "0",
        "NMAFC_SERVER_HEADER_TIMEOUT_S": str(HEADER_TIMEOUT_S),
        "NMAFC_SERVER_KEEP_ALIVE_S": str(KEEP_ALIVE_S),
        "NMAFC_SERVER_REQUEST_TIMEOUT_S": str(REQUEST_TIMEOUT_S),
        "NMAFC_SERVER_AGENT_MAX_CONCURRENT": str(AGENT_MAX_CONCURRENT),
        "NMAFC_SERVER_MAX_BODY_BYTES": str(1024 * 1024),
        "NMAFC_LIVE_QUEUE_SIZE": "4",
    }
    process = NmafcProcess("serve", env, root / "serve.log").start()
    yield process
    process.stop()
    log = process.log()
    assert "Traceback" not in log, log[-3000:]
    assert "unhandled" not in log, log[-3000:]


def connect(service: NmafcProcess) -> socket.socket:
    assert service.port is not None
    return socket.create_connection(("127.0.0.1", service.port), timeout=10)


def test_a_tenant_flooding_agent_wide_searches_cannot_stall_another(
    service: NmafcProcess,
) -> None:
    with httpx.Client(base_url=service.url, timeout=60) as http:
        for c in range(20):
            facts = [{"content": f"Conversation {c} fact {i}: the tulips bloom."} for i in range(3)]
            added = http.post(
                "/v1/memories",
                json={"facts": facts},
                headers={**FLOODER, "X-Conversation-ID": f"c{c}"},
            )
            assert added.status_code == 201, added.text
        victim_fact = {"facts": [{"content": "The victim's cat is called Miso."}]}
        assert http.post("/v1/memories", json=victim_fact, headers=VICTIM).status_code == 201

        def victim_search() -> float:
            started = time.perf_counter()
            found = http.post("/v1/memories/search", json={"query": "cat name"}, headers=VICTIM)
            assert found.status_code == 200, found.text
            assert "Miso" in found.json()["context"]
            return time.perf_counter() - started

        baseline = [victim_search() for _ in range(5)]
        statuses: Counter[int] = Counter()
        stop = threading.Event()

        def flood() -> None:
            with httpx.Client(base_url=service.url, timeout=60) as own:
                body = {"query": "tulips", "scope": "agent", "top_k": 50}
                while not stop.is_set():
                    statuses[
                        own.post("/v1/memories/search", json=body, headers=FLOODER).status_code
                    ] += 1

        flooders = [threading.Thread(target=flood) for _ in range(FLOODERS)]
        for thread in flooders:
            thread.start()
        try:
            time.sleep(1.0)
            during = [victim_search() for _ in range(5)]
        finally:
            stop.set()
            for thread in flooders:
                thread.join(60)
    assert set(statuses) <= {200, 429, 503}, statuses
    assert statuses[429] > 0, f"{FLOODERS} flooders never met the cap: {statuses}"
    before, under = statistics.median(baseline), statistics.median(during)
    # Against a floor of 50 ms: a 6 ms search sharing 2 cores with 8 flooders is CPU
    # sharing, not a stall; a stall is a search waiting behind the flood (seconds).
    ratio = under / max(before, 0.05)
    print(f"victim p50 {before * 1000:.0f} -> {under * 1000:.0f} ms ({ratio:.1f}x), {statuses}")
    assert ratio < 30, f"the victim's searches slowed {ratio:.1f}x"


def test_a_connection_stalled_in_its_headers_is_closed(service: NmafcProcess) -> None:
    with connect(service) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        said, seconds = closed_after(sock, 10)
    assert said == b""
    assert seconds < 2 * HEADER_TIMEOUT_S + 1


def test_a_stall_after_a_first_request_is_closed_too(service: NmafcProcess) -> None:
    with connect(service) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        _, seconds = closed_after(sock, 10)
    assert seconds < 2 * HEADER_TIMEOUT_S + 1


def test_an_idle_connection_is_closed_after_the_keep_alive(service: NmafcProcess) -> None:
    with connect(service) as sock:
        said, seconds = closed_after(sock, 10)
    assert said == b""
    assert seconds < KEEP_ALIVE_S + HEADER_TIMEOUT_S + 1


def test_a_body_declared_over_the_limit_is_413_before_it_is_sent(service: NmafcProcess) -> None:
    with connect(service) as sock:
        sock.sendall(
            b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nX-Agent-ID: a\r\n"
            b"Content-Type: application/json\r\nContent-Length: 50000000\r\n\r\n"
        )
        said = b""
        while b"payload_too_large" not in said:  # headers and body may come apart
            chunk = sock.recv(65536)
            if not chunk:
                break
            said += chunk
    assert said.startswith(b"HTTP/1.1 413"), said[:200]
    assert b"payload_too_large" in said


def test_a_body_that_trickles_is_cut_at_the_request_deadline(service: NmafcProcess) -> None:
    with connect(service) as sock:
        sock.sendall(
            b"POST /v1/memories HTTP/1.1\r\nHost: x\r\nX-Agent-ID: slow\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
            b'{"facts": [{"content": "'
        )
        said, seconds = closed_after(sock, REQUEST_TIMEOUT_S + 10)
    assert said.startswith(b"HTTP/1.1 408"), said[:300]
    assert b"body_timeout" in said
    assert seconds < REQUEST_TIMEOUT_S + 3
    listed = httpx.get(f"{service.url}/v1/memories", headers={"X-Agent-ID": "slow"})
    assert listed.json()["items"] == []


def test_a_binary_frame_in_the_handshake_is_closed_with_1003(service: NmafcProcess) -> None:
    assert service.port is not None
    ws = RawWebSocket(service.port)
    try:
        ws.send_bytes(b"\x00\xff binary")
        code, said = ws.until_closed()
    finally:
        ws.close()
    assert code == 1003
    assert said[-1]["type"] == "error"
    assert said[-1]["fix"]


def test_a_websocket_client_that_stops_reading_is_closed_with_1013(
    service: NmafcProcess,
) -> None:
    assert service.port is not None
    agent = {"X-Agent-ID": "lagging", "X-Conversation-ID": "c1"}
    ws = RawWebSocket(service.port, receive_buffer=4096)
    try:
        ws.send_json({"type": "auth", "agent_id": "lagging"})
        assert ws.receive_json()["type"] == "auth_success"
        ws.send_json({"type": "filter", "backfill": 0})
        assert ws.receive_json()["type"] == "backfilled"
        # The client reads nothing more while far more events than its queue are committed.
        facts = [{"content": f"Fact {i}: the tulips bloom in row {i}."} for i in range(12)]
        added = httpx.post(
            f"{service.url}/v1/memories", json={"facts": facts}, headers=agent, timeout=120
        )
        assert added.status_code == 201, added.text
        time.sleep(1.0)
        code, said = ws.until_closed()
    finally:
        ws.close()
    assert code == 1013
    assert len(said) < 12  # it was dropped, not served every event

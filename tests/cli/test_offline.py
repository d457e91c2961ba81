"""A first start in a fresh environment stays on this machine and inside its directories.

``nmafc serve`` runs under strace (``connect``, ``sendto``, ``sendmsg`` and ``bind`` of every
thread and child process) with a fresh home, data directory and cache directory, takes a
remember and a search, and stops. Any IPv4/IPv6 address that is not loopback, anything
addressed to port 53, or a connection to the name-service sockets (nscd, systemd-resolved)
fails the test with the offending line. Two controls prove the guard: a plain
``getaddrinfo`` and a connection attempt to a documentation address are caught, a loopback
connection is not.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from nmafc.settings import Settings
from nmafc.testing.processes import NmafcProcess

from ..needs import missing

TRACED = "trace=connect,sendto,sendmsg,bind"
_INET = re.compile(
    r"sa_family=AF_INET6?, sin6?_port=htons\((?P<port>\d+)\)"
    r'.*?(?:inet_addr\("(?P<v4>[^"]+)"\)|inet_pton\(AF_INET6, "(?P<v6>[^"]+)")'
)
_NAME_SERVICE = re.compile(r'sa_family=AF_UNIX, sun_path=@?"[^"]*(?:nscd|resolve)[^"]*"')
# Variables that could point NMAFC (or a library) at the user's own folders or services.
_FOREIGN = ("NMAFC_", "XDG_", "ORT_", "OPENAI", "ANTHROPIC", "AWS_", "HF_", "HTTP", "NO_PROXY")


def strace() -> str:
    found = shutil.which("strace")
    if found is None:
        missing("strace (the network guard)", "apt-get install -y strace (.ci/run does)")
    return found


def guarded(trace: Path) -> list[str]:
    """strace's command line: every thread and child, the calls that reach a network."""
    return [strace(), "-f", "-qq", "-e", TRACED, "-o", str(trace), "--"]


def violations(trace: str) -> list[str]:
    """The traced calls that left this machine or looked a name up."""
    found = []
    for line in trace.splitlines():
        if not re.search(r"\b(connect|sendto|sendmsg)\(", line):
            continue  # bind: where the server listens, not a contact
        if _NAME_SERVICE.search(line):
            found.append(line)
            continue
        for match in _INET.finditer(line):
            address = ipaddress.ip_address(match["v4"] or match["v6"])
            mapped = getattr(address, "ipv4_mapped", None)
            loopback = address.is_loopback or (mapped is not None and mapped.is_loopback)
            if match["port"] == "53" or not loopback:
                found.append(line)
    return found


def fresh_env(root: Path) -> tuple[dict[str, str], list[str]]:
    """A first start: a new home, data and cache directory, nothing of the user's set."""
    dirs = {name: root / name for name in ("home", "data", "cache")}
    for path in dirs.values():
        path.mkdir()
    env = {
        "HOME": str(dirs["home"]),
        "NMAFC_DATA_DIR": str(dirs["data"]),
        "NMAFC_CACHE_DIR": str(dirs["cache"]),
        "NMAFC_CONFIG": "",
    }
    drop = [key for key in os.environ if key.upper().startswith(_FOREIGN)]
    return env, drop


def stop_traced(service: NmafcProcess) -> None:
    """SIGINT to the traced server (strace itself holds fatal signals while it traces)."""
    assert service.process is not None
    tracer = service.process.pid
    children = Path(f"/proc/{tracer}/task/{tracer}/children").read_text().split()
    for child in children:
        os.kill(int(child), signal.SIGINT)
    assert service.stop(timeout_s=60) == 0, service.log()[-3000:]


def test_a_first_start_makes_no_lookup_and_no_connection_off_this_machine(
    tmp_path: Path,
) -> None:
    env, drop = fresh_env(tmp_path)
    trace = tmp_path / "trace.txt"
    service = NmafcProcess(
        "serve", env, tmp_path / "serve.log", drop=drop, wrapper=guarded(trace)
    ).start(timeout_s=300)
    try:
        headers = {"X-Agent-ID": "offline", "X-Conversation-ID": "first-run"}
        said = {"messages": [{"content": "My sister Ines lives in Porto."}]}
        added = httpx.post(f"{service.url}/v1/memories", json=said, headers=headers, timeout=60)
        assert added.status_code == 201, added.text
        found = httpx.post(
            f"{service.url}/v1/memories/search",
            json={"query": "Where does Ines live?"},
            headers=headers,
            timeout=60,
        )
        assert found.status_code == 200, found.text
        assert "Porto" in found.json()["context"]
    finally:
        stop_traced(service)
    text = trace.read_text()
    # The guard saw the server itself: its listening socket is in the trace.
    assert f"sin_port=htons({service.port})" in text
    assert violations(text) == []
    home, cache = Path(env["HOME"]), Path(env["NMAFC_CACHE_DIR"])
    written = [str(p.relative_to(home)) for p in home.rglob("*")]
    assert written == [], f"written outside NMAFC_DATA_DIR / NMAFC_CACHE_DIR: {written}"
    assert list(cache.glob("minilm-q8-*.onnx")), "the quantized query model is not cached"


CONTROL = """
import socket
listener = socket.create_server(("127.0.0.1", 0))
socket.create_connection(listener.getsockname(), timeout=5).close()
try:
    socket.getaddrinfo("example.invalid", 443)
except OSError:
    pass
try:
    socket.create_connection(("192.0.2.1", 9), timeout=0.2)  # TEST-NET-1: never routed
except OSError:
    pass
"""


def test_the_guard_catches_a_lookup_and_a_remote_connection_but_not_loopback(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "trace.txt"
    run = subprocess.run(
        [*guarded(trace), sys.executable, "-c", CONTROL], capture_output=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    text = trace.read_text()
    caught = violations(text)
    lookups = [line for line in caught if "htons(53)" in line or _NAME_SERVICE.search(line)]
    assert lookups, text
    assert any('inet_addr("192.0.2.1")' in line for line in caught), text
    loopback = [line for line in text.splitlines() if "connect(" in line and "127.0.0.1" in line]
    assert loopback, text  # the loopback connection was traced ...
    assert not set(loopback) & set(caught)  # ... and not flagged


def test_the_cache_defaults_to_a_folder_inside_the_data_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NMAFC_CACHE_DIR", raising=False)  # the test run sets a shared one
    assert Settings(data_dir=tmp_path).resolved_cache_dir() == tmp_path / "cache"
    elsewhere = Settings(data_dir=tmp_path, cache_dir=tmp_path / "c")
    assert elsewhere.resolved_cache_dir() == tmp_path / "c"

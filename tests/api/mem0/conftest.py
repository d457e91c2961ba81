"""The unchanged ``mem0ai`` SDK against one real ``nmafc serve`` per module, on loopback."""

from __future__ import annotations

import importlib
import ipaddress
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from nmafc.testing.processes import NmafcProcess

KEYS = {"alice-key": "agent-a", "bob-key": "agent-b", "root-key": "*", "demo-secret": "support-bot"}
# Every address this test process connects to (an audit hook: nothing is patched).
CONNECTED: list[Any] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "socket.connect":
        CONNECTED.append(args[1])


sys.addaudithook(_audit)


def off_loopback() -> list[Any]:
    """Addresses connected to that are not loopback (IP sockets only)."""
    foreign = []
    for address in CONNECTED:
        if isinstance(address, tuple) and address and isinstance(address[0], str):
            host = address[0]
            try:
                if not ipaddress.ip_address(host).is_loopback:
                    foreign.append(address)
            except ValueError:
                if host != "localhost":
                    foreign.append(address)
    return foreign


@pytest.fixture(scope="session")
def mem0(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    """``mem0`` imported with its telemetry off by its own setting and its files in a tmp dir."""
    saved = {k: os.environ.get(k) for k in ("MEM0_TELEMETRY", "MEM0_DIR")}
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ["MEM0_DIR"] = str(tmp_path_factory.mktemp("mem0"))
    try:
        yield importlib.import_module("mem0")
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NmafcProcess]:
    root = tmp_path_factory.mktemp("serve")
    data: Path = root / "data"
    env = {
        "NMAFC_DATA_DIR": str(data),
        "NMAFC_CONFIG": "",
        "XDG_CONFIG_HOME": str(root / "config"),
        "NMAFC_API_KEYS": ",".join(f"{k}:{a}" for k, a in KEYS.items()),
    }
    service = NmafcProcess("serve", env, root / "serve.log").start()
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

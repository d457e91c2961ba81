"""The unchanged ``mem0ai`` SDK against the doors' real ``nmafc serve`` (tests/doors.py)."""

from __future__ import annotations

import importlib
import ipaddress
import os
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

from nmafc.testing.processes import NmafcProcess

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


@pytest.fixture
def served(doors_service: NmafcProcess) -> NmafcProcess:
    return doors_service


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

"""The MCP tests share the doors' ``nmafc serve`` (tests/doors.py has its keys)."""

from __future__ import annotations

import pytest

from nmafc.testing.processes import NmafcProcess
from tests.doors import service_env

__all__ = ["service_env"]


@pytest.fixture
def served(doors_service: NmafcProcess) -> NmafcProcess:
    return doors_service


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

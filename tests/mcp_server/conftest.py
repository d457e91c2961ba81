"""One ``nmafc serve`` per module, with two agent-bound keys and an admin key."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nmafc.testing.processes import NmafcProcess

KEYS = {"alice-key": "agent-a", "bob-key": "agent-b", "root-key": "*"}


def service_env(data_dir: Path) -> dict[str, str]:
    """A fresh data directory, no settings file, the keys above."""
    return {
        "NMAFC_DATA_DIR": str(data_dir),
        "NMAFC_CONFIG": "",
        "XDG_CONFIG_HOME": str(data_dir / "config"),
        "NMAFC_API_KEYS": ",".join(f"{k}:{a}" for k, a in KEYS.items()),
    }


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NmafcProcess]:
    root = tmp_path_factory.mktemp("serve")
    service = NmafcProcess("serve", service_env(root / "data"), root / "serve.log").start()
    try:
        yield service
    finally:
        service.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"

"""The embedded default on a data dir it cannot write: a clear error naming the path.

The tests run as root, so permission bits stop nothing; instead the data dir sits under a
regular file (no directory can be made there), and "disk full" is a file-size limit put on
the running server (``RLIMIT_FSIZE``; Python ignores SIGXFSZ, so writes fail with EFBIG).
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from nmafc.testing.processes import NmafcProcess
from nmafc.testing.seaweedfs import free_port

from .conftest import VERBATIM

pytestmark = pytest.mark.faults
A = {"X-Agent-ID": "agent-d", "X-Conversation-ID": "c1"}


def test_a_data_dir_that_cannot_be_created_stops_start_up_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    data_dir = blocker / "nmafc"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NMAFC_")}
    served = subprocess.run(
        [sys.executable, "-m", "nmafc.cli.main", "serve", "--port", str(free_port())],
        env={**env, "NMAFC_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=90,
    )
    output = served.stdout + served.stderr
    assert served.returncode != 0, output
    assert "store_not_writable" in output
    assert str(data_dir) in output
    assert "NMAFC_DATA_DIR" in output


def test_a_full_disk_is_a_503_naming_the_store_and_writes_resume_after(
    tmp_path: Path, nmafc_processes: Callable[[dict[str, str]], NmafcProcess]
) -> None:
    data_dir = tmp_path / "data"
    service = nmafc_processes({**VERBATIM, "NMAFC_DATA_DIR": str(data_dir)}).start()
    url = f"{service.url}/v1/memories"

    def add(text: str) -> httpx.Response:
        return httpx.post(url, json={"messages": [{"content": text}]}, headers=A, timeout=60)

    assert add("before the disk filled up").status_code == 201
    assert service.process is not None
    pid = service.process.pid
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (0, hard))  # no file may grow any more
    try:
        refused = add("x " * 20000)  # a page-sized WAL append that cannot be written
    finally:
        resource.prlimit(pid, resource.RLIMIT_FSIZE, (hard, hard))
    assert refused.status_code == 503, refused.text
    body = refused.json()
    assert body["code"] == "store_not_writable"
    assert str(data_dir) in body["detail"]
    assert "NMAFC_DATA_DIR" in body["fix"]
    assert refused.headers["retry-after"] == "2"

    after = add("after space was freed")
    assert after.status_code == 201, after.text
    listed = httpx.get(url, headers=A, timeout=30).json()["items"]
    contents = sorted(m["content"] for m in listed)  # the refused write left nothing
    assert len(contents) == 2
    assert contents[0].endswith("after space was freed")
    assert contents[1].endswith("before the disk filled up")

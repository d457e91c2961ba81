"""Fault-test fixtures: stores a test owns and may break (a private PostgreSQL, a private
SeaweedFS), and ``nmafc serve`` in child processes.

The machine's shared PostgreSQL at 127.0.0.1:5432 is never stopped: other suites use it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from nmafc.testing.processes import NmafcProcess
from nmafc.testing.seaweedfs import SeaweedFS, free_port

from ..needs import missing


@pytest.fixture
def nmafc_processes(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], NmafcProcess]]:
    """Make ``nmafc serve`` children (logs in tmp_path); all are stopped at the end."""
    made: list[NmafcProcess] = []

    def make(env: dict[str, str]) -> NmafcProcess:
        process = NmafcProcess("serve", env, tmp_path / f"serve-{len(made)}.log")
        made.append(process)
        return process

    yield make
    for process in made:
        process.kill()


VERBATIM = {
    # One fact per message keeps the checks exact; no timed background work to race with.
    "NMAFC_EXTRACTOR": "verbatim",
    "NMAFC_SERVER_RETRY_AFTER_S": "2",
}


# -- a private PostgreSQL --------------------------------------------------------------


def _pg_bin(name: str) -> str:
    found = sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))
    if found:
        return str(found[-1])
    which = shutil.which(name)
    if which is None:
        missing(f"PostgreSQL server binaries ({name})", "apt-get install -y postgresql")
    return which


@dataclass
class PrivatePostgres:
    """An initdb'd cluster on a free port, started and stopped with pg_ctl."""

    root: Path
    port: int
    user: str | None  # run as this OS user (initdb refuses root)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def uri(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 60) -> None:
        subprocess.run(
            list(args),
            user=self.user,
            check=True,
            timeout=timeout,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def init(self) -> None:
        self._run(
            _pg_bin("initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
            "-E", "UTF8", "--no-sync",
        )  # fmt: skip

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=on"
        self._run(
            _pg_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.root / "pg.log"),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        self._run(_pg_bin("pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    """A PostgreSQL of this test's own, which it may stop and restart at will."""
    user = "postgres" if os.geteuid() == 0 else None
    # Not under pytest's tmp_path: that is private to root and the server runs as postgres.
    root = Path(tempfile.mkdtemp(prefix="nmafc-pg-"))
    if user is not None:
        shutil.chown(root, user)
    pg = PrivatePostgres(root, free_port(), user)
    try:
        pg.init()
        pg.start()
        yield pg
    finally:
        try:
            pg.stop("immediate")
        except subprocess.CalledProcessError:
            pass  # already stopped
        shutil.rmtree(root, ignore_errors=True)


# -- a private SeaweedFS ---------------------------------------------------------------


@pytest.fixture
def private_weed(tmp_path: Path) -> Iterator[SeaweedFS]:
    """A SeaweedFS of this test's own (not the session's), which it may kill and restart."""
    weed = SeaweedFS(tmp_path / "seaweedfs", bucket="nmafc-faults")
    try:
        weed.start()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield weed
    weed.stop()

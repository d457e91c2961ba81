"""Shared fixtures: real stores only (SQLite, PostgreSQL, LanceDB, SeaweedFS S3)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from nmafc.core.scope import Scope
from nmafc.embedding.base import Embedder, Vectors
from nmafc.embedding.onnx_minilm import OnnxMiniLM
from nmafc.engine.engine import MemoryEngine
from nmafc.settings import Settings
from nmafc.testing.processes import NmafcProcess
from nmafc.testing.seaweedfs import S3Server, seaweedfs
from tests.doors import service_env

__all__ = ["S3Server"]

POSTGRES_ADMIN_URL = os.environ.get(
    "NMAFC_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


@pytest.fixture(scope="session", autouse=True)
def model_cache(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """One NMAFC_CACHE_DIR for the run and the processes it starts.

    Every test has its own data directory, whose cache would otherwise rebuild the bundled
    model's quantized query graph (4-12 s here) at each ``nmafc serve``. The folder is in
    pytest's cache (``.pytest_cache``), so runs share it too; a test of the cache itself
    sets or drops the variable.
    """
    given = os.environ.get("NMAFC_CACHE_DIR")
    if given:
        yield Path(given)
        return
    cache = request.config.cache
    folder = Path(cache.mkdir("nmafc-cache")) if cache else tmp_path_factory.mktemp("cache")
    os.environ["NMAFC_CACHE_DIR"] = str(folder)
    try:
        yield folder
    finally:
        os.environ.pop("NMAFC_CACHE_DIR", None)


@pytest.fixture(scope="session")
def embedder(model_cache: Path) -> Iterator[OnnxMiniLM]:
    """The real bundled model, loaded once per test session."""
    model = OnnxMiniLM(cache_dir=model_cache)
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


def engine_settings(data_dir: Path, cold_uri: str) -> Settings:
    """Engine and storage tests pin mechanics (one fact per message keeps counts exact);
    the rule-based extractor has its own tests in tests/core/extraction."""
    return Settings(
        data_dir=data_dir,
        cold={"uri": cold_uri},  # type: ignore[arg-type]
        consolidation={"inline": False},  # type: ignore[arg-type]
        extractor="verbatim",
    )


@pytest.fixture
def settings(tmp_path: Path, cold_uri: str) -> Settings:
    return engine_settings(tmp_path, cold_uri)


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

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._inner.embed(texts)

    def close(self) -> None:
        pass


@pytest.fixture
def shared_embedder(embedder: OnnxMiniLM) -> _Shared:
    return _Shared(embedder)


# -- S3 (SeaweedFS on loopback) --------------------------------------------------------


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """A real S3-compatible server (SeaweedFS ``weed``) on loopback for the session."""
    try:
        with seaweedfs(tmp_path_factory.mktemp("seaweedfs")) as server:
            yield server
    except RuntimeError as exc:
        pytest.fail(str(exc))


# -- the other doors -------------------------------------------------------------------


@pytest.fixture(scope="session")
def doors_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NmafcProcess]:
    """One real ``nmafc serve`` shared by the MCP, Mem0 and LangGraph tests (see doors.py)."""
    root = tmp_path_factory.mktemp("doors")
    service = NmafcProcess("serve", service_env(root / "data"), root / "serve.log").start()
    try:
        yield service
    finally:
        service.stop()

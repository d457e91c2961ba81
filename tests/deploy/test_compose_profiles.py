"""Each compose profile renders with its env file and names images that can be pulled.

Docker does not run here, but ``docker compose config`` (or Debian's ``docker-compose``)
parses the file, interpolates the env files and applies the profiles the way ``up`` would.
MinIO's images left Docker Hub (its community edition is archived), so no profile may use
them; the S3 profile runs SeaweedFS, the store the tests run, pinned by version.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..needs import missing

ROOT = Path(__file__).resolve().parents[2]

PROFILES = {
    "embedded": [],
    "postgres": ["--profile", "postgres", "--env-file", "deploy/compose/postgres.env"],
    "s3": ["--profile", "s3", "--env-file", "deploy/compose/s3.env"],
    "replicas": [
        *("--profile", "postgres", "--profile", "s3", "--profile", "replicas"),
        *("--env-file", "deploy/compose/replicas.env"),
    ],
}


def _compose_cli() -> list[str]:
    """`docker compose` (v2 plugin) if present, else Debian's `docker-compose` (v1)."""
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    missing("A compose CLI (docker compose or docker-compose)",
            "apt-get install -y docker-compose (.ci/run does)")  # fmt: skip


def _rendered(profile: str) -> dict[str, Any]:
    """The services ``up`` would start with ``profile`` (v1's ``config`` lists them all)."""
    out = subprocess.run(
        [*_compose_cli(), "-f", "docker-compose.yml", *PROFILES[profile], "config"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    services: dict[str, Any] = yaml.safe_load(out.stdout)["services"]
    return {
        name: svc
        for name, svc in services.items()
        if not svc.get("profiles") or set(svc["profiles"]) & _named(PROFILES[profile])
    }


def _named(args: list[str]) -> set[str]:
    """The profiles ``--profile`` switches on in ``args``."""
    return {value for flag, value in zip(args, args[1:], strict=False) if flag == "--profile"}


@pytest.mark.parametrize("profile", PROFILES)
def test_each_profile_renders_and_its_env_file_reaches_nmafc(profile: str) -> None:
    services = _rendered(profile)
    for name in ("nmafc", "nmafc-replica") if profile == "replicas" else ("nmafc",):
        environment = services[name]["environment"]
        assert bool(environment.get("NMAFC_COLD_URI")) == (profile in ("postgres", "replicas"))
        assert bool(environment.get("NMAFC_HOT_URI")) == (profile in ("s3", "replicas"))


@pytest.mark.parametrize("profile", PROFILES)
def test_no_profile_uses_a_minio_image_and_every_pulled_image_is_pinned(profile: str) -> None:
    images = [svc["image"] for svc in _rendered(profile).values() if "build" not in svc]
    assert not [i for i in images if i.split("/")[0] == "minio"]
    assert all(":" in i and not i.endswith((":latest", ":main")) for i in images), images


def test_the_s3_profile_runs_seaweedfs_and_creates_the_bucket_nmafc_is_pointed_at() -> None:
    services = _rendered("s3")
    added = {n: s for n, s in services.items() if n != "nmafc"}
    assert {s["image"].split(":")[0] for s in added.values()} == {"chrislusf/seaweedfs"}
    hot_uri = services["nmafc"]["environment"]["NMAFC_HOT_URI"]
    bucket = hot_uri.removeprefix("s3://").split("/")[0]
    one_shot = added["seaweedfs-bucket"]
    assert f"s3.bucket.create -name {bucket}" in " ".join(one_shot["command"])
    assert one_shot["depends_on"]["seaweedfs"]["condition"] == "service_healthy"
    endpoint = services["nmafc"]["environment"]["NMAFC_HOT_S3_ENDPOINT"]
    assert endpoint == "http://seaweedfs:8333"
    assert "-s3.port=8333" in added["seaweedfs"]["command"]


def test_the_postgres_profile_runs_postgres_16_with_pgvector() -> None:
    image = _rendered("postgres")["postgres"]["image"]
    name, tag = image.split(":")
    assert name == "pgvector/pgvector"
    assert tag.endswith("-pg16")

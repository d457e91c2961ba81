"""The deployment files parse, and wire NMAFC with settings it actually reads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from nmafc.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def _settings_from_env(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Settings:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return Settings()


def _env_names(text: str) -> set[str]:
    return set(re.findall(r"\bNMAFC_[A-Z0-9_]+", text))


def _known(name: str) -> bool:
    """True if ``NMAFC_<name>`` is a settings field (flat or one group deep)."""
    field = name.removeprefix("NMAFC_").lower()
    if field in Settings.model_fields:
        return True
    for group, info in Settings.model_fields.items():
        model = info.annotation
        if field.startswith(group + "_") and hasattr(model, "model_fields"):
            if field[len(group) + 1 :] in model.model_fields:  # type: ignore[union-attr]
                return True
    return False


def test_every_nmafc_variable_in_the_deployment_files_is_a_real_setting() -> None:
    files = [
        ROOT / "Dockerfile",
        ROOT / "docker-compose.yml",
        *ROOT.glob("deploy/compose/*.env"),
        *ROOT.glob("deploy/k8s/*.yaml"),
    ]
    names = set().union(*(_env_names(f.read_text()) for f in files))
    assert names, "no NMAFC_* variables found"
    assert sorted(n for n in names if not _known(n)) == []


def test_plain_compose_up_runs_one_service_on_loopback_with_embedded_storage() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    default = [name for name, svc in compose["services"].items() if not svc.get("profiles")]
    assert default == ["nmafc"]
    service = compose["services"]["nmafc"]
    assert service["ports"] == ["127.0.0.1:8000:8000"]
    assert "healthcheck" in service
    assert any(v.endswith(":/data") for v in service["volumes"])
    assert "depends_on" not in service  # the profiles' stores are absent from a plain up


@pytest.mark.parametrize(
    ("profile", "env_file", "expected"),
    [
        ("postgres", "postgres.env", {"cold_uri": "postgresql://nmafc:nmafc@postgres:5432/nmafc"}),
        ("s3", "s3.env", {"hot_uri": "s3://nmafc/hot", "s3_endpoint": "http://seaweedfs:8333"}),
    ],
)
def test_each_profile_adds_healthy_stores_and_its_env_file_points_nmafc_at_them(
    profile: str, env_file: str, expected: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    added = {n: s for n, s in compose["services"].items() if profile in s.get("profiles", [])}
    assert added
    assert all("healthcheck" in s or "depends_on" in s for s in added.values())
    env = dict(
        line.split("=", 1)
        for line in (ROOT / "deploy/compose" / env_file).read_text().splitlines()
        if line and not line.startswith("#")
    )
    settings = _settings_from_env(env, monkeypatch)
    got = {
        "cold_uri": settings.cold.uri,
        "hot_uri": settings.hot.uri,
        "s3_endpoint": settings.hot.s3_endpoint,
    }
    assert {k: got[k] for k in expected} == expected


def test_the_dockerfile_builds_the_ui_a_wheel_and_runs_as_non_root_with_a_healthcheck() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert len(re.findall(r"^FROM ", text, re.M)) == 3
    assert "npm ci" in text
    assert "npm run build" in text
    assert "python -m build --wheel" in text
    assert re.search(r"^USER nmafc$", text, re.M)
    assert "HEALTHCHECK" in text
    assert "/healthz" in text
    assert re.search(r"^EXPOSE 8000$", text, re.M)


def _k8s() -> list[dict[str, Any]]:
    return [
        doc
        for path in sorted((ROOT / "deploy/k8s").glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc and "kind" in doc and doc["kind"] != "Kustomization"
    ]


def test_kubernetes_runs_replicated_api_with_probes_and_one_worker() -> None:
    deployments = {d["metadata"]["name"]: d for d in _k8s() if d["kind"] == "Deployment"}
    api = deployments["nmafc-api"]["spec"]
    worker = deployments["nmafc-worker"]["spec"]
    assert api["replicas"] >= 2
    assert worker["replicas"] == 1
    container = api["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert worker["template"]["spec"]["containers"][0]["args"] == ["nmafc", "worker"]
    assert api["template"]["metadata"]["annotations"]["prometheus.io/path"] == "/metrics"
    kustomization = yaml.safe_load((ROOT / "deploy/k8s/kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(
        p.name for p in (ROOT / "deploy/k8s").glob("*.yaml") if p.name != "kustomization.yaml"
    )

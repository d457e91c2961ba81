"""Scope affinity in ``deploy/``: the balancers hash on the headers NMAFC really uses.

Neither ingress-nginx nor Envoy runs here, so the files are checked for structure: the
hash key is built from :data:`nmafc.wire.headers.ROUTING`, the headers the client sends
and the routes read; a header renamed on either side breaks these tests, not the warmth
of a deployment silently.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from fastapi.dependencies.utils import get_dependant

from nmafc.api.deps import get_tenant
from nmafc.client import Client
from nmafc.errors import NmafcError
from nmafc.wire import headers

ROOT = Path(__file__).resolve().parents[2]


def _nginx_variable(header: str) -> str:
    return "$http_" + header.lower().replace("-", "_")


def _load(path: str) -> Any:
    return yaml.safe_load((ROOT / path).read_text())


def test_the_client_sends_every_routing_header_and_the_routes_read_them() -> None:
    seen: list[httpx.Headers] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers)
        return httpx.Response(503, json={"code": "store_unavailable", "detail": "probe"})

    transport = httpx.MockTransport(answer)
    with Client("http://nmafc", api_key="k", agent_id="a", conversation_id="c",
                transport=transport) as client:  # fmt: skip
        with pytest.raises(NmafcError):
            client.search("anything")
    (sent,) = seen
    assert [sent.get(name) for name in headers.ROUTING] == ["Bearer k", "a", "c"]
    read = {param.alias for param in get_dependant(path="/", call=get_tenant).header_params}
    assert read == {headers.AGENT, headers.CONVERSATION}


def test_the_ingress_hashes_consistently_on_the_routing_headers() -> None:
    ingress = _load("deploy/k8s/ingress.yaml")
    assert ingress["kind"] == "Ingress"
    key = ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/upstream-hash-by"]
    assert key == "".join(_nginx_variable(h) for h in headers.ROUTING)
    # ingress-nginx refuses annotation values with other characters (and so the Ingress).
    assert re.fullmatch(r"[A-Za-z0-9_$]+", key)
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    service = _load("deploy/k8s/service.yaml")
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    assert "ingress.yaml" in _load("deploy/k8s/kustomization.yaml")["resources"]


def _envoy() -> dict[str, Any]:
    config: dict[str, Any] = _load("deploy/compose/envoy.yaml")
    return config


def _envoy_routes(config: dict[str, Any]) -> list[dict[str, Any]]:
    (listener,) = config["static_resources"]["listeners"]
    (chain,) = listener["filter_chains"]
    manager = next(
        f["typed_config"]
        for f in chain["filters"]
        if f["name"] == "envoy.filters.network.http_connection_manager"
    )
    return [r for host in manager["route_config"]["virtual_hosts"] for r in host["routes"]]


def test_envoy_ring_hashes_every_route_on_the_routing_headers() -> None:
    config = _envoy()
    clusters = {c["name"]: c for c in config["static_resources"]["clusters"]}
    routes = _envoy_routes(config)
    assert routes
    for route in routes:
        action = route["route"]
        # Envoy matches header names case-insensitively (HTTP/2 sends them lower-case).
        hashed = [p["header"]["header_name"] for p in action["hash_policy"]]
        assert hashed == [h.lower() for h in headers.ROUTING]
        cluster = clusters[action["cluster"]]
        assert cluster["lb_policy"] in {"RING_HASH", "MAGLEV"}
        assert cluster["health_checks"][0]["http_health_check"]["path"] == "/readyz"


def test_the_replicas_profile_puts_envoy_in_front_of_replicas_that_share_the_stores() -> None:
    compose = _load("docker-compose.yml")["services"]
    envoy, replica = compose["envoy"], compose["nmafc-replica"]
    assert envoy["profiles"] == replica["profiles"] == ["replicas"]
    config = _envoy()
    mounted = {v.split(":")[0].removeprefix("./"): v.split(":")[1] for v in envoy["volumes"]}
    assert "/etc/envoy/envoy.yaml" == mounted["deploy/compose/envoy.yaml"]
    listen = config["static_resources"]["listeners"][0]["address"]["socket_address"]
    assert envoy["ports"] == [f"127.0.0.1:8080:{listen['port_value']}"]
    (cluster,) = config["static_resources"]["clusters"]
    assert cluster["type"] == "STRICT_DNS"  # one endpoint per replica's address
    (group,) = cluster["load_assignment"]["endpoints"]
    (endpoint,) = group["lb_endpoints"]
    target = endpoint["endpoint"]["address"]["socket_address"]
    assert (target["address"], target["port_value"]) == ("nmafc-replica", 8000)
    assert replica["deploy"]["replicas"] >= 2
    # Replicas serve; the `nmafc` service runs maintenance (the worker's job on k8s).
    assert replica["environment"]["NMAFC_MAINTENANCE_PASS_ENABLED"] == "false"
    assert replica["environment"]["NMAFC_MAINTENANCE_COMPACTION_ENABLED"] == "false"
    assert "NMAFC_COLD_URI" in replica["environment"]


def _env_file(name: str) -> dict[str, str]:
    lines = (ROOT / "deploy/compose" / name).read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))


@pytest.mark.parametrize("store", ["postgres.env", "s3.env"])
def test_the_replicas_env_file_points_every_replica_at_the_shared_stores(store: str) -> None:
    replicas = _env_file("replicas.env")
    assert _env_file(store).items() <= replicas.items()

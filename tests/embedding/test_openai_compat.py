"""The /v1/embeddings client, driven against a real HTTP server on loopback."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from nmafc.embedding.factory import create_embedder
from nmafc.embedding.openai_compat import OpenAICompatibleEmbedder
from nmafc.errors import ConfigurationError, EmbeddingUnavailable
from nmafc.settings.embedding import EmbeddingSettings


class _EmbeddingsServer(ThreadingHTTPServer):
    requests: list[dict[str, Any]]
    fail_with: int | None = None


class _Handler(BaseHTTPRequestHandler):
    server: _EmbeddingsServer

    def do_POST(self) -> None:  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "auth": self.headers.get("Authorization"), **body}
        )
        if self.server.fail_with:
            self.send_response(self.server.fail_with)
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "overloaded"}}')
            return
        data = [
            # Deliberately unnormalised and out of order, as some servers answer.
            {"index": i, "embedding": [float(len(text)), 1.0, 2.0]}
            for i, text in reversed(list(enumerate(body["input"])))
        ]
        payload = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[_EmbeddingsServer]:
    httpd = _EmbeddingsServer(("127.0.0.1", 0), _Handler)
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _url(server: _EmbeddingsServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def test_batches_probe_dimension_and_normalise(server: _EmbeddingsServer) -> None:
    client = OpenAICompatibleEmbedder(_url(server), "text-embed", api_key="sk-test", batch_size=2)
    assert client.dim == 3  # probed with one request
    vectors = client.embed(["a", "bbb", "cc", "dddd", "e"])
    assert vectors.shape == (5, 3)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert vectors[1] @ vectors[1] == pytest.approx(1.0)
    expected = np.array([3.0, 1.0, 2.0]) / np.linalg.norm([3.0, 1.0, 2.0])
    assert np.allclose(vectors[1], expected, atol=1e-6)  # order restored by `index`
    sizes = [len(r["input"]) for r in server.requests[1:]]
    assert sizes == [2, 2, 1]
    assert {r["auth"] for r in server.requests} == {"Bearer sk-test"}
    assert {r["path"] for r in server.requests} == {"/v1/embeddings"}
    client.close()


def test_server_errors_become_a_503_class_error_naming_the_setting(
    server: _EmbeddingsServer,
) -> None:
    client = OpenAICompatibleEmbedder(_url(server), "text-embed", dim=3)
    server.fail_with = 500
    with pytest.raises(EmbeddingUnavailable, match="NMAFC_EMBEDDING_BASE_URL") as caught:
        client.embed(["x"])
    assert caught.value.status == 503


def test_unreachable_endpoint_is_reported_not_hung() -> None:
    with pytest.raises(EmbeddingUnavailable, match="unreachable"):
        OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m", timeout_s=2)


def test_factory_requires_a_model_name_for_a_remote_endpoint(server: _EmbeddingsServer) -> None:
    with pytest.raises(ConfigurationError, match="NMAFC_EMBEDDING_MODEL"):
        create_embedder(EmbeddingSettings(base_url=_url(server)))
    remote = create_embedder(EmbeddingSettings(base_url=_url(server), model="m", dim=3))
    assert remote.model_name == "m"
    assert remote.dim == 3

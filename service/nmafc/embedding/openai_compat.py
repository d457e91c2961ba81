"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from nmafc.embedding.base import Vectors, normalise
from nmafc.errors import ConfigurationError, EmbeddingUnavailable


class OpenAICompatibleEmbedder:
    """POSTs batches to ``{base_url}/embeddings``; the dimension is probed once if not given."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        batch_size: int = 256,
        timeout_s: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s, transport=transport
        )
        self._model = model
        self._batch_size = batch_size
        self._dim = dim if dim is not None else self._probe_dim()

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    def _probe_dim(self) -> int:
        return int(self._request(["dimension probe"]).shape[1])

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        parts = [
            self._request(list(texts[i : i + self._batch_size]))
            for i in range(0, len(texts), self._batch_size)
        ]
        out = np.concatenate(parts, axis=0)
        if out.shape[1] != self._dim:
            raise ConfigurationError(
                f"Embedding endpoint returned {out.shape[1]}-d vectors, expected {self._dim}.",
                fix="Set NMAFC_EMBEDDING_DIM to the model's dimension, or use a store made "
                "with this model.",
            )
        return out

    def _request(self, batch: list[str]) -> Vectors:
        try:
            response = self._client.post("/embeddings", json={"model": self._model, "input": batch})
        except httpx.HTTPError as exc:
            raise EmbeddingUnavailable(
                f"Embedding endpoint {self._client.base_url} unreachable: {exc}."
            ) from exc
        if response.status_code >= 400:
            raise EmbeddingUnavailable(
                f"Embedding endpoint answered {response.status_code}: {response.text[:300]}"
            )
        try:
            data = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors = np.array([d["embedding"] for d in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingUnavailable(
                f"Embedding endpoint returned an unexpected body: {response.text[:300]}"
            ) from exc
        if vectors.ndim != 2 or vectors.shape[0] != len(batch):
            raise EmbeddingUnavailable(
                f"Embedding endpoint returned {vectors.shape[0]} vectors for {len(batch)} texts."
            )
        return normalise(vectors)

    def close(self) -> None:
        self._client.close()

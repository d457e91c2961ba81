"""The interface every embedder implements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors of a fixed dimension."""

    @property
    def model_name(self) -> str:
        """The name pinned in every store this embedder writes."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One row per text, in order; batched internally."""
        ...

    def close(self) -> None:
        """Release sessions or connections."""
        ...


@runtime_checkable
class QueryEmbedder(Protocol):
    """An embedder with a cheaper path for search questions than for stored texts."""

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """One row per question, comparable with ``embed``'s rows."""
        ...


def query_path(embedder: Embedder) -> Callable[[Sequence[str]], Vectors]:
    """How to embed search questions with ``embedder``: its query path if it has one."""
    return embedder.embed_queries if isinstance(embedder, QueryEmbedder) else embedder.embed


def normalise(vectors: npt.NDArray[np.floating]) -> Vectors:
    """Rows scaled to unit length (zero rows stay zero)."""
    out = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: Vectors = (out / norms).astype(np.float32, copy=False)
    return normalised

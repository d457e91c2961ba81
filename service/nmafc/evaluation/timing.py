"""An Embedder wrapper that measures the time spent inside the model."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from nmafc.embedding.base import Embedder, Vectors, query_path


class TimedEmbedder:
    """Delegates to ``inner`` and accumulates seconds and texts embedded.

    ``close()`` does not close ``inner`` unless ``close_inner`` is set: every arm of a run
    shares one model, and the engine closes its embedder when it closes.
    """

    def __init__(self, inner: Embedder, *, close_inner: bool = False) -> None:
        self._inner = inner
        self._embed_queries = query_path(inner)
        self._close_inner = close_inner
        self._lock = threading.Lock()  # recall embeds on the engine's thread pool
        self.seconds = 0.0
        self.texts = 0
        self.calls = 0

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed through ``inner`` and add the elapsed time to the totals."""
        return self._timed(self._inner.embed, texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Questions through ``inner``'s query path, timed like ``embed``."""
        return self._timed(self._embed_queries, texts)

    def _timed(self, embed: Callable[[Sequence[str]], Vectors], texts: Sequence[str]) -> Vectors:
        start = time.perf_counter()
        try:
            return embed(texts)
        finally:
            elapsed = time.perf_counter() - start
            with self._lock:
                self.seconds += elapsed
                self.texts += len(texts)
                self.calls += 1

    def snapshot(self) -> tuple[float, int]:
        """(seconds, texts) so far, to difference around a phase."""
        with self._lock:
            return self.seconds, self.texts

    def close(self) -> None:
        if self._close_inner:
            self._inner.close()


class Stopwatch:
    """Accumulates wall-clock seconds over several ``with`` blocks."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._start = 0.0

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds += time.perf_counter() - self._start

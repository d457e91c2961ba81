"""Concurrent recalls share their query embedding and their vector scans.

Embedding one short query and scanning a working set are both cheaper per query in a
batch: the model runs once over a few padded rows, and a scan reads the scope's whole
vector matrix from memory once for all the queries (≈ 29 ms for 16 queries against
≈ 13 ms for one, at 100,000 × 384). :class:`RecallBatching` holds one coalescer for each,
created once per engine. Only recall's single queries go through them; ingestion embeds
its own batches directly.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nmafc.embedding.base import Embedder, query_path
from nmafc.engine.candidates import Hits
from nmafc.engine.coalesce import Coalescer
from nmafc.storage.hot.working_set import Vector, WorkingSet

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Scan:
    """One recall's vector search: its query over each of ``sets``."""

    sets: tuple[WorkingSet, ...]
    query: Vector
    limit: int


def scan_batch(scans: list[Scan]) -> list[list[Hits]]:
    """Each scan's hits per set, best first, with one ``search_many`` per set and limit."""
    groups: dict[tuple[WorkingSet, int], list[tuple[int, int]]] = {}
    for i, scan in enumerate(scans):
        for j, working in enumerate(scan.sets):
            groups.setdefault((working, scan.limit), []).append((i, j))
    found: list[list[Hits]] = [[[] for _ in scan.sets] for scan in scans]
    for (working, limit), members in groups.items():
        queries = np.stack([np.asarray(scans[i].query, dtype=np.float32) for i, _ in members])
        for (i, j), hits in zip(members, working.search_many(queries, limit), strict=True):
            found[i][j] = hits
    return found


class RecallBatching:
    """The query-embedding and scan coalescers of one engine (``max_batch=1``: no batching).

    ``queries`` and ``scans`` are public for their counters (``calls``, ``batches``,
    ``pending``); call them through :meth:`embed` and :meth:`scan`.
    """

    def __init__(self, embedder: Embedder, max_batch: int) -> None:
        embed_queries = query_path(embedder)
        self.queries: Coalescer[str, Vector] = Coalescer(
            lambda texts: list(embed_queries(texts)), max_batch
        )
        # A scan fails alone only for a bad query (wrong dimension), so isolating is cheap.
        self.scans: Coalescer[Scan, list[Hits]] = Coalescer(
            scan_batch, max_batch, isolate_failures=True
        )

    def embed(self, query: str) -> Vector:
        """The query's vector, embedded together with the queries of concurrent recalls."""
        return self.queries.call(query)

    def scan(self, sets: Sequence[WorkingSet], query: Vector, limit: int) -> list[Hits]:
        """``working.search(query, limit)`` for each of ``sets``, batched across recalls."""
        if not sets:
            return []
        return self.scans.call(Scan(tuple(sets), query, limit))

    def close(self) -> None:
        """Refuse new recalls' batches and log how much was shared."""
        for name, coalescer in (("queries", self.queries), ("scans", self.scans)):
            coalescer.close()
            if coalescer.batches:
                log.info(
                    "recall batching: %d %s in %d batches", coalescer.calls, name, coalescer.batches
                )

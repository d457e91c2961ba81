"""Concurrent recalls share their query embedding and their vector scans.

Embedding one short query and scanning a working set are both cheaper per query in a
batch: the model runs once over a few padded rows, and a scan reads the scope's whole
vector matrix from memory once for all the queries (≈ 29 ms for 16 queries against
≈ 13 ms for one, at 100,000 × 384). :class:`RecallBatching` holds the coalescer that does
both, created once per engine. Only recall's questions go through it; ingestion embeds
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
from nmafc.index.working_set import Vector, WorkingSet

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


@dataclass(frozen=True, slots=True)
class Search:
    """One recall's question, and the sets to scan with its vector (none: embed only)."""

    query: str
    sets: tuple[WorkingSet, ...]
    limit: int


SearchOutcome = tuple[Vector, list[Hits]] | Exception


class RecallBatching:
    """The coalescer of one engine that embeds recalls' questions and scans with them.

    One stage, not an embedding stage and a scan stage: a recall needs its vector only to
    scan, and with two stages the scan's queue held the recalls that would have filled the
    next embedding batch. Under load, two stages embedded 1.7 questions per model run on
    average, against 6 in the scan; one stage embeds as many as it scans, and a model run
    costs 2.1 ms for one question against 1.4 ms a question for six. ``max_batch=1``: no
    batching. ``searches`` is public for its counters (``calls``, ``batches``,
    ``pending``).
    """

    def __init__(self, embedder: Embedder, max_batch: int) -> None:
        embed_queries = query_path(embedder)

        def run(searches: list[Search]) -> list[SearchOutcome]:
            # The model failing fails the whole batch (a remote embedder that is down
            # should not be asked again per question); a scan fails only its own search.
            vectors = np.asarray(embed_queries([s.query for s in searches]), dtype=np.float32)
            scans = [Scan(s.sets, v, s.limit) for s, v in zip(searches, vectors, strict=True)]
            try:
                found: list[list[Hits] | Exception] = list(scan_batch(scans))
            except Exception:
                found = [_scan_alone(scan) for scan in scans]
            return [
                hits if isinstance(hits, Exception) else (vector, hits)
                for vector, hits in zip(vectors, found, strict=True)
            ]

        self.searches: Coalescer[Search, SearchOutcome] = Coalescer(run, max_batch)

    def search(
        self, query: str, sets: Sequence[WorkingSet], limit: int
    ) -> tuple[Vector, list[Hits]]:
        """The question's vector and its ``limit`` best hits in each of ``sets``.

        Embedded and scanned together with the questions of concurrent recalls.
        """
        scanned = tuple(sets) if limit > 0 else ()
        outcome = self.searches.call(Search(query, scanned, limit))
        if isinstance(outcome, Exception):
            raise outcome
        vector, hits = outcome
        return vector, hits if scanned else [[] for _ in sets]

    def embed(self, query: str) -> Vector:
        """The question's vector alone (for searches that scan no working set)."""
        return self.search(query, (), 0)[0]

    def close(self) -> None:
        """Refuse new recalls' batches and log how much was shared."""
        self.searches.close()
        if self.searches.batches:
            log.info(
                "recall batching: %d searches in %d batches",
                self.searches.calls,
                self.searches.batches,
            )


def _scan_alone(scan: Scan) -> list[Hits] | Exception:
    try:
        return scan_batch([scan])[0]
    except Exception as error:
        return error

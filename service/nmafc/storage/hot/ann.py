"""The ANN vector index of the Hot table: when to build it and how searches use it.

Scopes that RAM does not hold are searched inside LanceDB (see ``HotStore.search``),
prefiltered on the tenant columns. Without a vector index that is an exact scan of the
filtered rows; once the table is large, an IVF index lets a search read the quantized
codes of a few partitions and re-rank the best of them on the stored float32 vectors.

* The compaction pass builds the index once the table holds ``min_rows`` rows (small
  and test tables never get one: a flat scan is exact and cheap there), and refreshes
  it through Lance's ``optimize_indices`` with every compaction (rows written since are
  searched flat and merged meanwhile: Lance never hides them).
* A search uses the index only for a reach holding at least ``min_share`` of the
  table's rows (in practice: an agent-wide search of a large agent). One shared index
  serves every tenant, so a probe reads every tenant's codes in its partitions and the
  tenant filter discards most of them: a conversation's own rows, read exactly through
  the scalar indexes, cost less (``nmafc bench ann``, 5·10⁵ rows over 3,011 scopes:
  the index was 2.7-3.4× slower for scopes of 10²-10⁴ rows, equal at a scope of 20 % of
  the table, 3× faster over the whole table). The reach's row count is cached for
  ``count_ttl_s`` (it only picks the path: both are correct).
* An indexed search probes at least ``nprobes`` partitions and more while it has found
  fewer than its limit, then re-ranks ``refine_factor`` × limit candidates exactly.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal

log = logging.getLogger(__name__)

IndexType = Literal["IVF_SQ", "IVF_HNSW_SQ", "IVF_PQ"]
COLUMN = "vector"


@dataclass(frozen=True, slots=True)
class AnnPolicy:
    """When the Hot table gets a vector index, of which kind, and how it is searched."""

    min_rows: int = 200_000
    index_type: IndexType = "IVF_SQ"
    nprobes: int = 20
    refine_factor: int = 4
    min_share: float = 0.3
    count_ttl_s: float = 60.0

    def config(self) -> Any:
        """The LanceDB index configuration (cosine, as every Hot search is)."""
        from lancedb.index import IvfHnswSq, IvfPq, IvfSq

        if self.index_type == "IVF_HNSW_SQ":
            return IvfHnswSq(distance_type="cosine")
        if self.index_type == "IVF_PQ":
            return IvfPq(distance_type="cosine")
        return IvfSq(distance_type="cosine")


def vector_index(table: Any) -> Any | None:
    """The table's vector index (its ``IndexConfig``), or None."""
    for index in table.list_indices():
        if COLUMN in index.columns:
            return index
    return None


def due(table: Any, policy: AnnPolicy) -> bool:
    """Whether the table is large enough for an index and has none yet."""
    return int(table.count_rows()) >= policy.min_rows and vector_index(table) is None


def build(table: Any, policy: AnnPolicy) -> bool:
    """Build the index if it is due; True if one was built.

    Training reads the table as of its current version and does not hold up writes: Lance
    rebases the commit over writes made meanwhile (their rows are searched flat until the
    next refresh), and a build that loses a commit race is left to the next pass.
    """
    if not due(table, policy):
        return False
    rows = int(table.count_rows())
    log.info("building the Hot table's %s vector index over %d rows", policy.index_type, rows)
    try:
        table.create_index(COLUMN, config=policy.config(), replace=False)
    except (OSError, RuntimeError, ValueError) as exc:
        if "conflict" not in str(exc).lower():
            raise
        # Another commit won a race Lance cannot rebase over: the next compaction retries.
        log.info("the vector index build lost a commit race (%s); the next pass retries", exc)
        return False
    finally:
        table.checkout_latest()
    return True


def tuned(query: Any, policy: AnnPolicy) -> Any:
    """``query`` with the probe and re-rank settings (no effect on a table without index)."""
    return (
        query.minimum_nprobes(policy.nprobes)
        .maximum_nprobes(0)  # keep probing until the limit is met, however narrow the filter
        .refine_factor(policy.refine_factor)
    )


class IndexUse:
    """Whether a search of one reach should use the index: it exists, and the reach holds
    ``min_share`` of the table. Counts are kept ``count_ttl_s`` (another process may build
    the index or grow a scope meanwhile: a stale answer costs time, never correctness)."""

    _MAX_ENTRIES = 10_000

    def __init__(self, policy: AnnPolicy) -> None:
        self.policy = policy
        self._lock = threading.Lock()
        self._indexed: tuple[float, bool] | None = None
        self._counts: dict[str, tuple[float, int, int]] = {}

    def wanted(self, table: Any, where: str) -> bool:
        now = time.monotonic()
        if not self._has_index(table, now):
            return False
        with self._lock:
            cached = self._counts.get(where)
        if cached is None or now - cached[0] > self.policy.count_ttl_s:
            cached = (now, int(table.count_rows(where)), int(table.count_rows()))
            with self._lock:
                if len(self._counts) >= self._MAX_ENTRIES:
                    self._counts.clear()
                self._counts[where] = cached
        _, rows, total = cached
        return total > 0 and rows >= self.policy.min_share * total

    def forget(self) -> None:
        """After this process built or dropped the index: look again at the next search."""
        with self._lock:
            self._indexed = None
            self._counts.clear()

    def _has_index(self, table: Any, now: float) -> bool:
        with self._lock:
            known = self._indexed
        if known is not None and now - known[0] <= self.policy.count_ttl_s:
            return known[1]
        indexed = vector_index(table) is not None
        with self._lock:
            self._indexed = (now, indexed)
        return indexed

"""Compaction and version pruning of the Hot table, through Lance's own optimizer.

Every Hot write is a LanceDB commit: one small fragment and one table version. Left alone,
fragments make each ``merge_insert`` and each scoped scan slower (they open every
fragment's files) and versions keep every removed row's bytes on disk. LanceDB's
``Table.optimize`` cannot be told which fragments to rewrite, so this module drives the
``pylance`` dataset beneath the table (the same Lance release LanceDB embeds):

* ``compact`` merges small fragments up to ``target_rows`` rows each (so one pass
  rewrites a bounded amount, not the whole table) and rewrites every fragment whose
  deleted share exceeds ``threshold``: 0 materialises every deletion, which is what a
  purge needs;
* ``prune`` removes the named versions and every file only they reference. A version is
  named only once it was superseded long enough ago that no reader still uses it (see
  :class:`Pruner`), or, for a purge, because it still references purged rows.

A reader that was using a removed version fails with Lance's "Not found"; the Hot store
then re-opens the latest version and retries once (:func:`is_stale_read`).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from nmafc.rwlock import SharedLock
from nmafc.storage.erasure import Erasure

log = logging.getLogger(__name__)

_ATTEMPTS = 3  # a compaction that loses a commit race to a writer is planned again
# Longest a compaction waits for this process's Hot writes in flight (new ones wait
# behind it). Writes end within their own deadline, so this is a safety net, not a budget:
# a compaction that gave up too early under load would leave writes ever slower.
_WAIT_S = 15.0


@dataclass(frozen=True, slots=True)
class CompactionPolicy:
    """How the Hot table is kept small: fragment size and how long old versions live."""

    target_rows: int = 4_096
    retention_s: float = 10.0
    # Lance caches index pages and file/manifest metadata per session; its defaults (GiBs)
    # let every compaction's new index and fragment files add to RSS for good.
    index_cache_mb: int = 32
    metadata_cache_mb: int = 32

    def session(self) -> Any:
        """A LanceDB session whose caches are bounded by this policy."""
        import lancedb

        return lancedb.Session(
            index_cache_size_bytes=self.index_cache_mb << 20,
            metadata_cache_size_bytes=self.metadata_cache_mb << 20,
        )


@dataclass(frozen=True, slots=True)
class Pruned:
    versions: int
    files: int
    bytes: int
    failed: int


def dataset(table: Any) -> Any:
    """The Lance dataset at the table's latest version."""
    table.checkout_latest()
    return table.to_lance()


def compact(table: Any, writes: SharedLock, *, target_rows: int, threshold: float) -> int:
    """Merge small fragments and materialise deletions; returns fragments rewritten.

    The rewrite holds ``writes`` (this process's Hot writes) alone, waiting at most
    ``_WAIT_S`` for writes in flight. Another process's write can still win the commit
    race; the pass is then planned again, up to ``_ATTEMPTS`` times, and raises after.
    """
    metrics = None
    for attempt in range(_ATTEMPTS):
        with writes.exclusive(_WAIT_S) as alone:
            if not alone:
                raise CompactionDeferred(f"Hot writes held the table for {_WAIT_S:g}s")
            try:
                metrics = dataset(table).optimize.compact_files(
                    target_rows_per_fragment=target_rows,
                    materialize_deletions=True,
                    materialize_deletions_threshold=threshold,
                )
                break
            except (OSError, RuntimeError, ValueError) as exc:
                if "commit conflict" not in str(exc).lower():
                    raise
                if attempt == _ATTEMPTS - 1:  # another process's writes kept winning
                    raise CompactionDeferred(f"lost {_ATTEMPTS} commit races: {exc}") from exc
                log.info("Hot compaction lost a commit race (%s); planning it again", exc)
        time.sleep(0.05 * (attempt + 1))
    assert metrics is not None
    dataset(table).optimize.optimize_indices()
    table.checkout_latest()
    return int(metrics.fragments_removed)


class CompactionDeferred(RuntimeError):
    """Writes kept the table busy; the next pass compacts it."""


def prune(table: Any, versions: range, *, delete_unverified: bool = False) -> Pruned:
    """Remove ``versions`` (the latest is always kept) and the files only they reference."""
    if not versions:
        return Pruned(0, 0, 0, 0)
    stats = dataset(table).cleanup_old_versions(
        versions=list(versions),
        delete_unverified=delete_unverified,
        error_if_tagged_old_versions=False,
    )
    table.checkout_latest()
    files = (
        stats.data_files_removed
        + stats.deletion_files_removed
        + stats.index_files_removed
        + stats.transaction_files_removed
    )
    return Pruned(int(stats.old_versions), int(files), int(stats.bytes_removed),
                  int(stats.failed_deletes))  # fmt: skip


def oldest_version(table: Any) -> int:
    """The oldest version still on disk (reads every manifest: call rarely)."""
    return min(int(v["version"]) for v in table.list_versions())


def fragment_count(table: Any) -> int:
    return int(table.stats()["fragment_stats"]["num_fragments"])


def small_fragments(table: Any, target_rows: int) -> int:
    """Fragments beyond those a fully compacted table of this size would have."""
    stats = table.stats()
    full = int(stats["num_rows"]) // target_rows
    return max(0, int(stats["fragment_stats"]["num_fragments"]) - full - 1)


def is_stale_read(exc: BaseException) -> bool:
    """Whether ``exc`` is Lance failing to find a file that a pruned version referenced."""
    return isinstance(exc, (OSError, RuntimeError)) and "Not found" in str(exc)


class Pruner:
    """Which versions may go: those superseded at least ``retention_s`` ago.

    After each compaction this process notes ``(when, version)``. Every version older than
    a noted one had been superseded by the time it was noted, so once a note is
    ``retention_s`` old the versions before it can have no reader left (reads and writes
    last seconds; one that outlives its deadline is abandoned and checked again). This
    needs no clock agreement between replicas: the note is this process's own.
    """

    def __init__(self, retention_s: float) -> None:
        self.retention_s = retention_s
        self.floor: int | None = None  # every version below it is already gone
        self._notes: deque[tuple[float, int]] = deque(maxlen=256)

    def note(self, version: int, now: float | None = None) -> None:
        self._notes.append((time.monotonic() if now is None else now, version))

    def due(self, table: Any, now: float | None = None) -> range:
        """Versions that may be removed now (possibly none)."""
        now = time.monotonic() if now is None else now
        ripe = [version for noted, version in self._notes if noted <= now - self.retention_s]
        if not ripe:
            return range(0)
        while self._notes and self._notes[0][1] <= ripe[-1]:
            self._notes.popleft()
        return self.below(table, ripe[-1])

    def below(self, table: Any, version: int) -> range:
        """Every version older than ``version`` that may still be on disk."""
        if self.floor is None:
            self.floor = oldest_version(table)
        return range(self.floor, version)

    def removed_below(self, version: int) -> None:
        self.floor = max(self.floor or 0, version)


def erasure(rewritten: int, pruned: Pruned, *, unverified_kept: bool) -> Erasure:
    """The receipt of a compaction that materialised deletions and the pruning after it."""
    counts = {
        "fragments_rewritten": rewritten,
        "versions_removed": pruned.versions,
        "files_removed": pruned.files,
        "bytes_removed": pruned.bytes,
    }
    if pruned.failed:
        return Erasure(
            ("compacted", "old_versions_removed"),
            False,
            {**counts, "failed_deletes": pruned.failed},
            "Some old files could not be deleted; the next compaction retries.",
        )
    note = (
        "Files of Lance transactions that failed are kept up to 7 days (they may belong "
        "to a commit in progress); `nmafc erase` removes them with the service stopped."
        if unverified_kept
        else None
    )
    return Erasure(("compacted", "old_versions_removed"), True, counts, note)

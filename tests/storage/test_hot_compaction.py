"""The Hot table's fragment and version counts stay bounded; pruned versions heal readers."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from nmafc.core.scope import Scope
from nmafc.storage.hot.compaction import CompactionDeferred, CompactionPolicy
from nmafc.storage.hot.lance import HotStore
from nmafc.storage.hot.rows import Watermark

from ..core.factories import record

DIM = 8
BOUND = 8


def _open(uri: Path, retention_s: float) -> HotStore:
    policy = CompactionPolicy(target_rows=4096, retention_s=retention_s)
    return HotStore.open(str(uri), table="memories", model="m", dim=DIM, policy=policy)


def _write(store: HotStore, index: int) -> None:
    scope = Scope("agent", f"c{index % 13}")
    row = record(agent_id=scope.agent_id, conversation_id=scope.conversation_id)
    vector = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    store.write(scope, Watermark(1 + index % 13, index + 1), [(row, vector)], ())


def _shape(store: HotStore) -> tuple[int, int]:
    """(fragments, versions) as LanceDB itself counts them."""
    table = store._table
    return table.stats()["fragment_stats"]["num_fragments"], len(table.list_versions())


def test_compacting_when_due_keeps_fragments_and_versions_under_the_bound(tmp_path: Path) -> None:
    store = _open(tmp_path / "hot", retention_s=0)
    worst = (0, 0)
    for index in range(300):
        _write(store, index)
        if store.compaction_due(BOUND):
            store.compact()
        fragments, versions = _shape(store)
        worst = (max(worst[0], fragments), max(worst[1], versions))
    assert worst[0] <= BOUND
    # Commits since the last pass (< 2 * BOUND) plus what one pass itself commits.
    assert worst[1] <= 2 * BOUND + 4
    assert store._table.count_rows("kind = 'fact'") == 300


def test_versions_younger_than_the_retention_are_kept_for_their_readers(tmp_path: Path) -> None:
    store = _open(tmp_path / "hot", retention_s=3600)
    for index in range(40):
        _write(store, index)
        if store.compaction_due(BOUND):
            store.compact()
    fragments, versions = _shape(store)
    assert fragments <= BOUND
    assert versions > 40  # nothing superseded an hour ago: nothing pruned


def test_a_reader_on_a_pruned_version_retries_on_the_latest(tmp_path: Path) -> None:
    writer = _open(tmp_path / "hot", retention_s=0)
    for index in range(5):
        _write(writer, index)
    reader = _open(tmp_path / "hot", retention_s=0)  # another process's handle
    assert len(reader.load(Scope("agent", "c1")).records) == 1
    for index in range(5, 20):
        _write(writer, index)
    writer.purge(Scope("agent", "c2"))
    erasure = writer.erase_deleted()
    assert erasure.complete
    assert erasure.counts["versions_removed"] > 0
    # The reader's handle still names the files of a version that no longer exists.
    assert len(reader.load(Scope("agent", "c1")).records) == 2
    assert reader.load(Scope("agent", "c2")).records == []


def test_compaction_beside_another_processes_writer_loses_no_write(tmp_path: Path) -> None:
    compactor = _open(tmp_path / "hot", retention_s=0)
    _write(compactor, 0)
    other = _open(tmp_path / "hot", retention_s=0)  # its own handle and write lock
    done = threading.Event()
    written: list[int] = []

    def write_steadily() -> None:
        for index in range(1, 121):
            _write(other, index)
            written.append(index)
        done.set()

    thread = threading.Thread(target=write_steadily, daemon=True)
    thread.start()
    passes = deferred = 0
    while not done.is_set():
        try:
            compactor.compact()
            passes += 1
        except CompactionDeferred:  # the other writer won every commit race this time
            deferred += 1
    thread.join(60)
    compactor.compact()
    assert written == list(range(1, 121))
    assert passes + deferred > 0
    # Every write landed exactly once, whatever the compactions in between rewrote.
    assert compactor._table.count_rows("kind = 'fact'") == 121
    assert _shape(compactor)[0] <= 2

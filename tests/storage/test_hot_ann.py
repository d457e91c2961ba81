"""The Hot table's ANN index: built by compaction past a size, refreshed, and scoped."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from nmafc.core.scope import AgentScope, Scope
from nmafc.settings import Settings
from nmafc.storage.hot.ann import AnnPolicy
from nmafc.storage.hot.lance import HotStore
from nmafc.storage.hot.rows import Watermark

from ..core.factories import record

DIM = 32
SCOPES = [Scope("agent-a", "big"), Scope("agent-a", "small"), Scope("agent-b", "big")]
SIZES = {SCOPES[0]: 400, SCOPES[1]: 40, SCOPES[2]: 400}


def _open(path: Path, min_rows: int) -> HotStore:
    return HotStore.open(
        str(path), table="memories", model="test-model", dim=DIM,
        ann_policy=AnnPolicy(min_rows=min_rows),
    )  # fmt: skip


def _vectors(rng: np.random.Generator, n: int) -> np.ndarray:
    # Clustered like text embeddings (a few topics), so IVF partitions mean something.
    centres = rng.standard_normal((8, DIM)).astype(np.float32)
    v = centres[rng.integers(0, 8, n)] + 0.5 * rng.standard_normal((n, DIM)).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def _fill(store: HotStore, rng: np.random.Generator) -> dict[Scope, dict[str, np.ndarray]]:
    held: dict[Scope, dict[str, np.ndarray]] = {}
    for pk, scope in enumerate(SCOPES, start=1):
        vectors = _vectors(rng, SIZES[scope])
        rows = [
            (record(agent_id=scope.agent_id, conversation_id=scope.conversation_id), v)
            for v in vectors
        ]
        store.write(scope, Watermark(pk, len(rows)), rows, ())
        held[scope] = {r.id: v for r, v in rows}
    return held


def _nearest(held: dict[str, np.ndarray], query: np.ndarray) -> str:
    ids = list(held)
    return ids[int(np.argmax(np.stack([held[i] for i in ids]) @ query))]


def test_compaction_builds_an_index_past_the_threshold_and_search_stays_exact_and_scoped(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(25)
    store = _open(tmp_path / "hot", min_rows=500)
    held = _fill(store, rng)
    assert store.vector_index() is None  # writes alone never build it
    assert store.compaction_due(max_fragments=10**6)  # the index is due: compaction runs
    assert store.compact()["vector_index_built"] == 1
    index = store.vector_index()
    assert index is not None
    assert index["index_type"] == "IvfSq"  # LanceDB names it so
    assert index["indexed_rows"] >= sum(SIZES.values())
    for scope in SCOPES:
        for query in _vectors(rng, 10):
            for indexed in (True, False):
                found = store.search_with(scope, query, 10, indexed=indexed)
                hits = [rid for rid, _ in found]
                assert _nearest(held[scope], query) in hits
                assert set(hits) <= set(held[scope])  # prefiltered: no other scope's rows
                assert len(hits) == min(10, SIZES[scope])
            assert store.search(scope, query, 10) == found
    agent = AgentScope("agent-a")
    mine = {**held[SCOPES[0]], **held[SCOPES[1]]}
    hits = [rid for rid, _ in store.search(agent, _vectors(rng, 1)[0], 60)]
    assert len(hits) == 60
    assert set(hits) <= set(mine)


def test_rows_written_after_the_build_are_found_then_indexed_by_the_next_compaction(
    tmp_path: Path,
) -> None:
    rng = np.random.default_rng(7)
    store = _open(tmp_path / "hot", min_rows=500)
    _fill(store, rng)
    store.compact()
    scope = SCOPES[1]
    late = record(agent_id=scope.agent_id, conversation_id=scope.conversation_id)
    vector = _vectors(rng, 1)[0]
    store.write(scope, Watermark(2, 100), [(late, vector)], ())
    index = store.vector_index()
    assert index is not None
    assert index["unindexed_rows"] > 0
    assert store.search(scope, vector, 5)[0][0] == late.id  # searched flat meanwhile
    assert store.compact()["vector_index_built"] == 0  # refreshed, not rebuilt
    index = store.vector_index()
    assert index is not None
    assert index["unindexed_rows"] == 0
    assert store.search(scope, vector, 5)[0][0] == late.id


def test_a_table_below_the_threshold_gets_no_index(tmp_path: Path) -> None:
    store = _open(tmp_path / "hot", min_rows=Settings().hot.ann_min_rows)
    _fill(store, np.random.default_rng(1))
    assert store.compact()["vector_index_built"] == 0
    assert store.vector_index() is None
    assert not store.uses_index(SCOPES[0])


def test_only_a_reach_holding_a_large_share_of_the_table_searches_through_the_index(
    tmp_path: Path,
) -> None:
    store = _open(tmp_path / "hot", min_rows=500)
    _fill(store, np.random.default_rng(5))
    assert not store.uses_index(SCOPES[0])  # no index yet
    store.compact()
    # 400 of ~843 rows: the index; 40 rows: its own rows read exactly cost less.
    assert store.uses_index(SCOPES[0])
    assert not store.uses_index(SCOPES[1])
    assert store.uses_index(AgentScope("agent-a"))


@pytest.mark.parametrize("scope", SCOPES)
def test_the_indexed_search_returns_what_the_exact_scan_returns(
    tmp_path: Path, scope: Scope
) -> None:
    rng = np.random.default_rng(3)
    store = _open(tmp_path / "hot", min_rows=500)
    _fill(store, rng)
    store.compact()
    for query in _vectors(rng, 5):
        indexed = [rid for rid, _ in store.search(scope, query, 20)]
        exact = [rid for rid, _ in store.search_with(scope, query, 20, indexed=False)]
        assert len(set(indexed) & set(exact)) >= 0.9 * len(exact)


def test_building_the_index_beside_a_writer_loses_no_write(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    store = _open(tmp_path / "hot", min_rows=500)
    _fill(store, rng)
    scope = Scope("agent-c", "busy")
    written: list[str] = []
    stop = threading.Event()

    def write() -> None:
        seq = 0
        while not stop.is_set() or seq < 3:
            seq += 1
            rows = [(record(agent_id="agent-c", conversation_id="busy"), v)
                    for v in _vectors(rng, 5)]  # fmt: skip
            store.write(scope, Watermark(9, seq), rows, ())
            written.extend(r.id for r, _ in rows)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        built = store.compact()["vector_index_built"]
    finally:
        stop.set()
        writer.join(timeout=60)
    assert not writer.is_alive()
    assert built == 1
    assert store.vector_index() is not None
    assert sorted(r.id for r in store.load(scope).records) == sorted(written)
    assert store.count(scope) == len(written)

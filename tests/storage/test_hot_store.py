"""The LanceDB Hot store: cosine search, scoping, batched writes, pinned model, S3."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from nmafc.core.scope import AgentScope, Scope
from nmafc.core.tiers import Tier
from nmafc.errors import EmbeddingModelMismatch, StoreUnavailable
from nmafc.storage.hot.lance import HotStore
from nmafc.storage.hot.rows import VectorRows, Watermark

from ..conftest import S3Server
from ..core.factories import record

DIM = 8
A = Scope("agent-a", "c1")
B = Scope("agent-b", "c1")


def _unit(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def _rec(scope: Scope, **fields: object):  # type: ignore[no-untyped-def]
    return record(agent_id=scope.agent_id, conversation_id=scope.conversation_id, **fields)


def _open(uri: str, **options: str) -> HotStore:
    return HotStore.open(
        uri, table="memories", model="test-model", dim=DIM, options=options or None
    )


def test_search_is_cosine_not_l2_with_a_pinned_value(tmp_path: Path) -> None:
    store = _open(str(tmp_path / "hot"))
    # Same direction, different length: cosine 1.0 where L2 would rank it far away.
    a = _rec(A, content="x")
    b = _rec(A, content="y")
    store.write(A, Watermark(1, 1), [(a, _unit(1, 0) * 5), (b, _unit(0.6, 0.8))], ())
    hits = dict(store.search(A, _unit(1, 0), limit=5))
    assert hits[a.id] == pytest.approx(1.0, abs=1e-6)
    assert hits[b.id] == pytest.approx(0.6, abs=1e-6)


def test_every_query_is_scoped(tmp_path: Path) -> None:
    store = _open(str(tmp_path / "hot"))
    mine, theirs = _rec(A), _rec(B)
    store.write(A, Watermark(1, 1), [(mine, _unit(1))], ())
    store.write(B, Watermark(2, 1), [(theirs, _unit(1))], ())
    assert [h for h, _ in store.search(A, _unit(1), 10)] == [mine.id]
    assert [r.id for r in store.load(B).records] == [theirs.id]
    assert store.count(AgentScope("agent-a")) == 1
    assert set(store.watermarks()) == {A, B}
    assert store.watermarks(A) == {A: Watermark(1, 1)}


def test_an_agent_wide_search_ranks_every_conversation_of_the_agent_and_no_other(
    tmp_path: Path,
) -> None:
    store = _open(str(tmp_path / "hot"))
    a2 = Scope("agent-a", "c2")
    near, nearer, theirs = _rec(A), _rec(a2), _rec(B)
    store.write(A, Watermark(1, 1), [(near, _unit(0.6, 0.8))], ())
    store.write(a2, Watermark(2, 1), [(nearer, _unit(0.8, 0.6))], ())
    store.write(B, Watermark(3, 1), [(theirs, _unit(1))], ())  # the best match, elsewhere
    hits = store.search(AgentScope("agent-a"), _unit(1), 10)
    assert [h for h, _ in hits] == [nearer.id, near.id]
    assert [c for _, c in hits] == pytest.approx([0.8, 0.6], abs=1e-6)


def test_a_search_about_an_entity_ranks_only_what_is_about_it_or_links_to_it(
    tmp_path: Path,
) -> None:
    store = _open(str(tmp_path / "hot"))
    about = _rec(A, entity="jon")
    linking = _rec(A, entity="ana", related_entities=("jon", "paris"))
    other = _rec(A, entity="ana")  # the query's best match, about someone else
    elsewhere = _rec(B, entity="jon")
    store.write(
        A,
        Watermark(1, 3),
        [(about, _unit(0.6, 0.8)), (linking, _unit(0.8, 0.6)), (other, _unit(1))],
        (),
    )
    store.write(B, Watermark(2, 1), [(elsewhere, _unit(1))], ())
    hits = store.search_about(A, "jon", _unit(1), 10)
    assert [h for h, _ in hits] == [linking.id, about.id]
    assert [c for _, c in hits] == pytest.approx([0.8, 0.6], abs=1e-6)
    assert store.known_entities(A, ["jon", "paris", "ana", "rome", "o'neil"]) == {
        "jon",
        "paris",
        "ana",
    }
    assert store.known_entities(B, ["paris", "jon"]) == {"jon"}
    assert store.known_entities(A, []) == set()


def test_a_write_is_one_commit_carrying_rows_removals_and_watermark(tmp_path: Path) -> None:
    store = _open(str(tmp_path / "hot"))
    first = [(_rec(A), _unit(1, i)) for i in range(20)]
    store.write(A, Watermark(1, 20), first, ())
    version = store._table.version
    replaced = first[0][0].evolve(k=3)
    store.write(A, Watermark(1, 23), [(replaced, first[0][1])], [first[1][0].id, first[2][0].id])
    assert store._table.version == version + 1
    snapshot = store.load(A)
    assert len(snapshot.records) == 18
    assert snapshot.watermark == Watermark(1, 23)
    assert {r.id: r.k for r in snapshot.records}[replaced.id] == 3
    assert snapshot.vectors.shape == (18, DIM)
    assert store.compact()["gone_rows_deleted"] == 2
    assert len(store.load(A).records) == 18


def test_a_load_brings_the_vectors_in_the_precision_asked_for(tmp_path: Path) -> None:
    store = _open(str(tmp_path / "hot"))
    store.write(A, Watermark(1, 5), [(_rec(A), _unit(1, i)) for i in range(5)], ())
    full, half = store.load(A), store.load(A, np.float16)
    assert full.vectors.dtype == np.float32
    assert half.vectors.dtype == np.float16
    assert half.vectors.flags.c_contiguous
    assert np.array_equal(half.vectors, full.vectors.astype(np.float16))
    assert [r.id for r in half.records] == [r.id for r in full.records]


def test_a_load_larger_than_a_read_batch_keeps_each_vector_with_its_record(
    tmp_path: Path,
) -> None:
    store = _open(str(tmp_path / "hot"))
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((20_000, DIM)).astype(np.float32)
    written = [(_rec(A, content=f"fact {i}"), vectors[i]) for i in range(len(vectors))]
    store.write(A, Watermark(1, 20_000), written, ())
    snapshot = store.load(A, np.float16)
    assert snapshot.watermark == Watermark(1, 20_000)
    row_of = {rid: i for i, rid in enumerate(snapshot.columns.ids)}
    assert len(row_of) == len(snapshot.vectors) == 20_000
    for record_, vector in written[::997]:
        assert np.array_equal(snapshot.vectors[row_of[record_.id]], vector.astype(np.float16))
        assert snapshot.columns.record(row_of[record_.id]).content == record_.content


def test_vector_rows_grow_past_the_count_expected_and_stop_short_of_it() -> None:
    matrix = np.arange(40, dtype=np.float32).reshape(10, 4)
    column = pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), 4)
    grown = VectorRows(4, np.float16, expected=3)
    grown.extend(column.slice(0, 6))
    grown.extend(pa.chunked_array([column.slice(6, 2), column.slice(8, 2)]))
    assert np.array_equal(grown.matrix(), matrix.astype(np.float16))
    short = VectorRows(4, np.float32, expected=50)
    short.extend(column.slice(2, 3))
    assert short.matrix().shape == (3, 4)
    assert short.matrix().flags.c_contiguous
    assert np.array_equal(short.matrix(), matrix[2:5])


def test_a_write_that_lands_late_leaves_what_a_newer_write_wrote(tmp_path: Path) -> None:
    # A write that outlived its deadline (the guard cannot cancel it) may commit after the
    # catch-up that replaced it; it must not put back older versions, removed records or
    # an older watermark.
    store = _open(str(tmp_path / "hot"))
    kept, removed = _rec(A, k=1.0), _rec(A)
    stale = [(kept, _unit(1)), (removed, _unit(0, 1))]
    store.write(A, Watermark(1, 12), [(kept.evolve(k=3), _unit(1))], [removed.id])
    store.write(A, Watermark(1, 10), stale, ())  # the late one
    snapshot = store.load(A)
    assert [(r.id, r.k) for r in snapshot.records] == [(kept.id, 3)]
    assert snapshot.watermark == Watermark(1, 12)
    assert store.count(A) == 1
    store.write(A, Watermark(1, 13), stale, ())  # newer writes still replace rows
    assert {r.id: r.k for r in store.load(A).records} == {kept.id: 1.0, removed.id: removed.k}


def test_a_write_too_big_for_the_id_index_keeps_the_same_rules(tmp_path: Path) -> None:
    # 12,000 rows are joined to the table by a scan of its ids, not through the index.
    store = _open(str(tmp_path / "hot"))
    records = [(_rec(A), _unit(1, i % 7)) for i in range(12_000)]
    store.write(A, Watermark(1, 10), records, ())
    store.write(A, Watermark(1, 12), [], [r.id for r, _ in records[1_000:]])
    store.write(A, Watermark(1, 11), records, ())  # a late, older write of them all
    snapshot = store.load(A)
    assert {r.id for r in snapshot.records} == {r.id for r, _ in records[:1_000]}
    assert snapshot.watermark == Watermark(1, 12)


def test_loaded_records_round_trip_every_field(tmp_path: Path) -> None:
    store = _open(str(tmp_path / "hot"))
    originals = [
        _rec(A, related_entities=("melanie",), source_turn_ids=(3, 9), k=2, importance=0.7),
        _rec(A, tier=Tier.CORE_ANCHOR),  # never expires: no expiry turn is stored
        _rec(A, related_entities=(), source_turn_ids=()),
        # Text beyond ASCII, and an entity that is another record's link.
        _rec(A, entity="melanie", content="Zoë's café — 東京 🎉", related_entities=("zoë",)),
        _rec(A, content=""),
    ]
    vectors = [_unit(1), _unit(0, 1), _unit(1, 1), _unit(1, 0, 1), _unit(0, 0, 1)]
    store.write(A, Watermark(1, 1), list(zip(originals, vectors, strict=True)), ())
    snapshot = store.load(A)
    loaded = {r.id: (r, v) for r, v in zip(snapshot.records, snapshot.vectors, strict=True)}
    for original, vector in zip(originals, vectors, strict=True):
        assert loaded[original.id][0] == original
        assert loaded[original.id][1].tolist() == vector.tolist()
    assert math.isinf(loaded[originals[1].id][0].expires_turn)


def test_a_load_over_many_writes_pairs_each_record_with_its_vector(tmp_path: Path) -> None:
    store = _open(str(tmp_path / "hot"))
    written: dict[str, np.ndarray] = {}
    for seq in range(1, 6):  # each write a new fragment; the watermark row moves along
        batch = [(_rec(A, entity=f"topic_{i % 3}"), _unit(seq, i + 1)) for i in range(4)]
        removed = list(written)[:1]  # the oldest record still live
        store.write(A, Watermark(1, seq), batch, removed)
        store.write(B, Watermark(2, seq), [(_rec(B), _unit(0, 0, 1))], ())
        for rid in removed:
            del written[rid]
        written.update({r.id: v for r, v in batch})

    snapshot = store.load(A)

    assert snapshot.watermark == Watermark(1, 5)
    assert {r.id: v.tolist() for r, v in zip(snapshot.records, snapshot.vectors, strict=True)} == {
        rid: v.tolist() for rid, v in written.items()
    }
    # A value the rows repeat is one object in RAM, however many records hold it.
    assert len({id(r.agent_id) for r in snapshot.records}) == 1
    assert len({id(r.entity) for r in snapshot.records}) == 3


def test_opening_with_another_model_or_dimension_is_refused(tmp_path: Path) -> None:
    uri = str(tmp_path / "hot")
    _open(uri)
    with pytest.raises(EmbeddingModelMismatch, match="NMAFC_EMBEDDING_MODEL"):
        HotStore.open(uri, table="memories", model="other-model", dim=DIM)
    with pytest.raises(EmbeddingModelMismatch):
        HotStore.open(uri, table="memories", model="test-model", dim=DIM * 2)


def test_purge_removes_a_scope_or_a_whole_agent(tmp_path: Path) -> None:
    store = _open(str(tmp_path / "hot"))
    store.write(A, Watermark(1, 1), [(_rec(A), _unit(1))], ())
    store.write(
        Scope("agent-a", "c2"), Watermark(3, 1), [(_rec(Scope("agent-a", "c2")), _unit(1))], ()
    )
    store.write(B, Watermark(2, 1), [(_rec(B), _unit(1))], ())
    assert store.purge(A) == 2  # the record and the watermark row
    assert store.count(AgentScope("agent-a")) == 1
    store.purge(AgentScope("agent-a"))
    assert store.count(AgentScope("agent-a")) == 0
    assert store.count(B) == 1


@pytest.mark.s3
def test_the_same_store_works_on_s3(s3_server: S3Server) -> None:
    options = s3_server.lance_options()
    store = HotStore.open(
        s3_server.uri("hot-unit"), table="memories", model="test-model", dim=DIM, options=options
    )
    a, b = _rec(A), _rec(A)
    store.write(A, Watermark(1, 2), [(a, _unit(1, 0)), (b, _unit(0.6, 0.8))], ())
    hits = dict(store.search(A, _unit(1, 0), limit=5))
    assert hits[b.id] == pytest.approx(0.6, abs=1e-6)
    reopened = HotStore.open(
        s3_server.uri("hot-unit"), table="memories", model="test-model", dim=DIM, options=options
    )
    assert reopened.load(A).watermark == Watermark(1, 2)
    assert not math.isnan(hits[a.id])


@pytest.mark.s3
def test_after_a_missed_deadline_the_next_call_runs_on_a_client_of_its_own(
    s3_server: S3Server,
) -> None:
    """New calls through the session of calls stuck on a dead server were seen to hang for
    minutes after S3 came back (the S3-outage fault test): a trip opens a fresh one."""
    options = s3_server.lance_options()
    store = HotStore.open(
        s3_server.uri("hot-reconnect"), table="memories", model="test-model", dim=DIM,
        options=options,
    )  # fmt: skip
    a = _rec(A)
    store.write(A, Watermark(1, 1), [(a, _unit(1, 0))], ())
    store.guard_calls(timeout_s=1e-6, cooldown_s=0.0)
    opened_with = store._session
    with pytest.raises(StoreUnavailable):  # no S3 call answers within a microsecond
        store.count(A)
    assert store.guard is not None
    store.guard.timeout_s = 30.0
    assert store.count(A) == 1
    assert store._session is not None
    assert store._session is not opened_with
    b = _rec(A)
    store.write(A, Watermark(1, 2), [(b, _unit(0, 1))], ())
    assert store.load(A).watermark == Watermark(1, 2)


def test_a_handle_sees_rows_another_process_committed_within_the_consistency_interval(
    tmp_path: Path,
) -> None:
    # Two replicas (or `serve --workers`) share one table. LanceDB's default never looks
    # for other handles' commits: the reader would search its opening version forever.
    uri = str(tmp_path / "hot")
    writer = _open(uri)
    reader = HotStore.open(uri, table="memories", model="test-model", dim=DIM,
                           read_consistency_s=0.0)  # fmt: skip
    assert reader.search(A, _unit(1), 5) == []
    fact = _rec(A, content="written by the other replica")
    writer.write(A, Watermark(1, 1), [(fact, _unit(1))], ())
    assert [rid for rid, _ in reader.search(A, _unit(1), 5)] == [fact.id]
    assert reader.count(A) == 1

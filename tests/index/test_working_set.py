"""The RAM working set: one matrix product for many queries gives what each search gives."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

from nmafc.core.scope import Scope
from nmafc.index.top_k import best_rows
from nmafc.index.working_set import Update, WorkingSet, WorkingSetCache
from tests.core.factories import record

DIM = 8


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _working_set(n: int, removed: int, seed: int = 3) -> WorkingSet:
    rng = np.random.default_rng(seed)
    records = [record(id=f"r{i}") for i in range(n)]
    working = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM)
    working.apply([Update(r, v) for r, v in zip(records, _unit(rng, n), strict=True)], [], 1)
    working.apply([], [f"r{i}" for i in range(0, 2 * removed, 2)], 2)  # dead rows in between
    return working


@pytest.mark.parametrize(("n", "removed", "limit"), [(200, 40, 10), (30, 12, 25), (30, 12, 100)])
def test_search_many_gives_each_row_what_that_query_alone_gives(
    n: int, removed: int, limit: int
) -> None:
    working = _working_set(n, removed)
    queries = _unit(np.random.default_rng(11), 7)
    many = working.search_many(queries, limit)
    assert len(many) == len(queries)
    for query, hits in zip(queries, many, strict=True):
        alone = working.search_many(query[None, :], limit)[0]
        assert [rid for rid, _ in hits] == [rid for rid, _ in alone]
        assert [s for _, s in hits] == pytest.approx([s for _, s in alone], abs=1e-6)
        assert len(hits) == min(limit, n - removed)
        assert not {rid for rid, _ in hits} & {f"r{i}" for i in range(0, 2 * removed, 2)}


def test_limit_beyond_the_live_count_returns_every_live_record_best_first() -> None:
    working = _working_set(20, 5)
    [hits] = working.search_many(_unit(np.random.default_rng(5), 1), 1000)
    assert {rid for rid, _ in hits} == set(working.records)
    scores = [s for _, s in hits]
    assert scores == sorted(scores, reverse=True)


def test_one_query_scores_exactly_as_the_matrix_vector_product() -> None:
    working = _working_set(50, 0)
    query = _unit(np.random.default_rng(9), 1)[0]
    matrix = np.stack([working.vector(f"r{i}") for i in range(50)])
    expected = matrix @ query
    for rid, score in working.search_many(query[None, :], 50)[0]:
        assert score == float(expected[int(rid[1:])])


def test_an_empty_set_gives_one_empty_list_per_query() -> None:
    working = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM)
    assert working.search_many(_unit(np.random.default_rng(1), 3), 5) == [[], [], []]


def test_queries_of_the_wrong_dimension_are_refused() -> None:
    working = _working_set(10, 0)
    with pytest.raises(ValueError, match="queries must be"):
        working.search_many(np.zeros((2, DIM + 1), dtype=np.float32), 5)


@pytest.mark.parametrize("n", [1, 7, 50, 1_000, 20_000, 100_000])
@pytest.mark.parametrize("k", [1, 10, 50, 200])
def test_best_rows_are_the_exact_top_k_with_ties_by_index(n: int, k: int) -> None:
    rng = np.random.default_rng(n * 1000 + k)
    scores = rng.standard_normal(n).astype(np.float32)
    scores[rng.integers(0, n, size=n // 10)] = -np.inf  # dead rows
    scores[rng.integers(0, n, size=n // 20)] = 0.5  # many exact ties

    expected = np.argsort(-scores, kind="stable")[:k]

    assert best_rows(scores, k).tolist() == expected.tolist()


def test_best_rows_survive_a_sample_that_misleads() -> None:
    n, k = 100_000, 50
    step = n // 1024
    # Only the sampled positions score high: the sample's threshold admits three rows,
    # fewer than k, so the exact partition decides.
    few = np.zeros(n, dtype=np.float32)
    few[::step] = np.arange(len(few[::step]), dtype=np.float32) + 10
    # Everything ties at zero but k rows between the samples: the threshold (0) admits
    # every row, and the best are still found and ordered.
    many = np.zeros(n, dtype=np.float32)
    many[np.arange(1, n, step)[:k]] = np.linspace(1.0, 2.0, k, dtype=np.float32)

    for scores in (few, many):
        assert best_rows(scores, k).tolist() == np.argsort(-scores, kind="stable")[:k].tolist()


def test_vectors_are_held_in_half_precision_with_cosines_within_1e_4_of_float32() -> None:
    rng = np.random.default_rng(13)
    dim, n = 384, 2_000
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    working = WorkingSet(Scope("a", "c"), scope_pk=1, dim=dim)
    records = [record(id=f"r{i}") for i in range(n)]
    working.apply([Update(r, v) for r, v in zip(records, vectors, strict=True)], [], 1)
    queries = vectors[:4] + 0.5 * rng.standard_normal((4, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)

    held = working.vector("r7")
    assert held is not None
    assert held.dtype == np.float32
    assert held.tolist() == vectors[7].astype(np.float16).astype(np.float32).tolist()
    narrow = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM)
    narrow.apply([Update(r, v) for r, v in zip(records, _unit(rng, n), strict=True)], [], 1)
    assert working.nbytes - narrow.nbytes == 2 * (dim - DIM) * n  # two bytes a dimension
    for query, hits in zip(queries, working.search_many(queries, 50), strict=True):
        exact = vectors @ query
        assert max(abs(score - float(exact[int(rid[1:])])) for rid, score in hits) < 1e-4


def test_a_set_past_the_int8_threshold_searches_as_the_float32_set_does() -> None:
    rng = np.random.default_rng(21)
    n = 3_000
    records = [record(id=f"r{i}") for i in range(n)]
    vectors = _unit(rng, n)
    plain = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM)
    quantised = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM, int8_scan_min_rows=2_000)
    for working in (plain, quantised):
        first = zip(records[:1_500], vectors[:1_500], strict=True)
        working.apply([Update(r, v) for r, v in first], [], 1)
        # Crossing the threshold mid-life: the rows held so far are quantised then.
        working.apply(
            [Update(r, v) for r, v in zip(records[1_500:], vectors[1_500:], strict=True)], [], 2
        )
        moved = [Update(records[i], vectors[(i + 7) % n]) for i in range(0, n, 50)]
        working.apply(moved, [f"r{i}" for i in range(1, n, 9)], 3)
    queries = _unit(np.random.default_rng(4), 6)

    assert quantised.nbytes > plain.nbytes  # the int8 copy is accounted for
    for single in queries[:1]:
        assert [rid for rid, _ in quantised.search_many(single[None, :], 20)[0]] == [
            rid for rid, _ in plain.search_many(single[None, :], 20)[0]
        ]
    for mine, theirs in zip(
        quantised.search_many(queries, 20), plain.search_many(queries, 20), strict=True
    ):
        assert [rid for rid, _ in mine] == [rid for rid, _ in theirs]
        assert [s for _, s in mine] == pytest.approx([s for _, s in theirs], abs=1e-6)


@pytest.fixture
def unfrozen_heap() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def _quantised_set(n: int = 300) -> WorkingSet:
    rng = np.random.default_rng(5)
    working = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM, int8_scan_min_rows=100)
    records = [record(id=f"r{i}", content=f"fact number {i}") for i in range(n)]
    working.apply([Update(r, v) for r, v in zip(records, _unit(rng, n), strict=True)], [], 1)
    return working


def test_a_freezing_cache_keeps_the_sets_put_in_out_of_full_collections(
    unfrozen_heap: None,
) -> None:
    working = _quantised_set()
    tracked = {id(o) for o in gc.get_objects()}
    assert any(id(r) in tracked for r in working.records.values())

    WorkingSetCache(1 << 30, freeze_every=len(working.records)).put(working)

    tracked = {id(o) for o in gc.get_objects()}
    assert not any(id(r) in tracked for r in working.records.values())
    assert gc.get_freeze_count() >= len(working.records)


def test_the_heap_is_frozen_once_per_freeze_every_records_put_in(unfrozen_heap: None) -> None:
    cache = WorkingSetCache(1 << 30, freeze_every=500)
    cache.put(_quantised_set(300))
    assert gc.get_freeze_count() == 0
    working = _quantised_set(300)
    cache.put(working)  # 600 records since the start
    assert gc.get_freeze_count() >= 600
    gc.unfreeze()
    cache.put(_quantised_set(300))  # 300 since the last freeze
    assert gc.get_freeze_count() == 0


def test_a_cache_that_never_freezes_leaves_the_collector_alone(unfrozen_heap: None) -> None:
    WorkingSetCache(1 << 30).put(_quantised_set())

    assert gc.get_freeze_count() == 0


def test_a_frozen_set_is_freed_when_dropped_without_the_collector(unfrozen_heap: None) -> None:
    cache = WorkingSetCache(1 << 30, freeze_every=1)
    working = _quantised_set()
    working.search_many(_unit(np.random.default_rng(6), 1), 5)  # lazy structures built
    working.keyword_search({"fact": 1.0}, 3.0, 5)
    gone = weakref.ref(working)
    cache.put(working)
    del working
    gc.disable()  # a leak through a reference cycle would need the collector: keep it off
    try:
        cache.drop()
        assert gone() is None
    finally:
        gc.enable()


def _set_of(conversation: str, n: int, seq: int = 1) -> WorkingSet:
    rng = np.random.default_rng(len(conversation) + n)
    working = WorkingSet(Scope("a", conversation), scope_pk=1, dim=DIM)
    records = [record(id=f"{conversation}-{i}", content=f"fact {i}") for i in range(n)]
    working.apply([Update(r, v) for r, v in zip(records, _unit(rng, n), strict=True)], [], seq)
    return working


def test_the_cache_evicts_the_least_recently_used_sets_beyond_its_budget() -> None:
    a, b, c = _set_of("a", 50), _set_of("b", 50), _set_of("c", 50)
    cache = WorkingSetCache(a.nbytes + b.nbytes + c.nbytes // 2)
    cache.put(a)
    cache.put(b)
    assert cache.get(a.scope) is a  # now b is the least recently used
    cache.put(c)
    assert cache.get(b.scope) is None
    assert cache.get(a.scope) is a
    assert cache.get(c.scope) is c
    assert cache.nbytes() == a.nbytes + c.nbytes <= cache.max_bytes


def test_a_set_that_grew_after_it_was_cached_counts_at_its_new_size_when_next_used() -> None:
    a, b = _set_of("a", 50), _set_of("b", 50)
    cache = WorkingSetCache(3 * (a.nbytes + b.nbytes))
    cache.put(a)
    cache.put(b)
    grown = _set_of("a", 400, seq=2)  # ingestion into a, applied in place
    a.apply([Update(r, grown.vectors([r.id])[r.id]) for r in grown.records.values()], [], 2)
    assert a.nbytes > cache.max_bytes - b.nbytes
    assert cache.get(a.scope) is a  # counted anew: b, older, goes
    assert cache.get(b.scope) is None
    assert cache.nbytes() == a.nbytes


def test_dropped_sets_free_their_share_of_the_budget() -> None:
    a, b = _set_of("a", 50), _set_of("b", 50)
    cache = WorkingSetCache(a.nbytes + b.nbytes)
    cache.put(a)
    cache.drop([a.scope])
    cache.put(b)
    cache.put(a)
    assert cache.get(a.scope) is a
    assert cache.get(b.scope) is b
    cache.drop_agent("a")
    assert cache.nbytes() == 0
    cache.put(_set_of("c", 50))
    assert cache.get(Scope("a", "c")) is not None


def test_a_set_offered_takes_only_the_room_left_and_never_a_cached_scope_s_place() -> None:
    # A set begun by a write is offered, not put: a searched scope is never evicted for it.
    a, b, c = _set_of("a", 50), _set_of("b", 50), _set_of("c", 50)
    cache = WorkingSetCache(a.nbytes + b.nbytes + c.nbytes // 2)
    assert cache.offer(a)
    assert cache.offer(b)
    assert not cache.offer(c)  # it would not fit beside a and b
    assert cache.scopes() == [a.scope, b.scope]
    assert cache.get(c.scope) is None
    newer_a = _set_of("a", 10, seq=2)
    assert not cache.offer(newer_a)  # a scope's cached set is never replaced by an offer
    assert cache.get(a.scope) is a
    assert cache.nbytes() == a.nbytes + b.nbytes


def test_a_cache_with_no_room_takes_no_offer() -> None:
    a = _set_of("a", 50)
    cache = WorkingSetCache(a.nbytes - 1)
    assert not cache.offer(a)
    assert cache.scopes() == []
    assert cache.nbytes() == 0


def test_a_set_loaded_at_once_reserves_room_for_its_rows_and_no_more() -> None:
    at_once = _set_of("a", 1100)  # one apply, as a load from storage does
    row_by_row = WorkingSet(Scope("a", "b"), scope_pk=1, dim=DIM)
    for seq, (rid, record_) in enumerate(at_once.records.items(), start=1):
        row_by_row.apply([Update(record_, at_once.vectors([rid])[rid])], [], seq)
    assert at_once.nbytes < row_by_row.nbytes  # 1,100 rows against 2,048 after doublings

    size = at_once.nbytes
    updated = [Update(r, None) for r in list(at_once.records.values())[:50]]
    at_once.apply(updated, [], 2)  # reinforcement: the same records again
    assert at_once.nbytes == size


def test_under_any_mix_of_uses_the_cache_keeps_within_budget_dropping_the_oldest_first() -> None:
    # A model of the rule, checked after every step of a long random mix of loads and uses.
    rng = np.random.default_rng(7)
    sets = {
        name: _set_of(name, int(n))
        for name, n in zip("abcdefgh", rng.integers(5, 80, 8), strict=True)
    }
    budget = 3 * max(ws.nbytes for ws in sets.values())
    cache = WorkingSetCache(budget)
    model: list[str] = []  # least recently used first
    for step in range(400):
        name = str(rng.choice(list(sets)))
        if rng.random() < 0.5:
            cache.put(sets[name])
        elif cache.get(sets[name].scope) is None:
            assert name not in model, f"step {step}: {name} was evicted out of turn"
            continue
        if name in model:
            model.remove(name)
        model.append(name)
        while sum(sets[n].nbytes for n in model) > budget:
            model.pop(0)
        assert cache.scopes() == [sets[n].scope for n in model], f"step {step}"
        assert cache.nbytes() == sum(sets[n].nbytes for n in model) <= budget


def test_nearest_about_ranks_every_record_of_an_entity_hub_included() -> None:
    rng = np.random.default_rng(5)
    vectors = _unit(rng, 60)
    about_ann = [record(id=f"a{i}", related_entities=("ann",)) for i in range(40)]
    others = [record(id=f"o{i}", entity="bo_hobby", related_entities=("bo",)) for i in range(20)]
    working = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM)
    updates = [Update(r, v) for r, v in zip([*about_ann, *others], vectors, strict=True)]
    working.apply(updates, [], 1)
    working.apply([], ["a0", "a1"], 2)
    query = _unit(np.random.default_rng(9), 1)[0]

    found = working.nearest_about(["ann"], query, limit=10)

    live = {f"a{i}": vectors[i] for i in range(2, 40)}
    expected = sorted(live, key=lambda rid: -float(live[rid] @ query))[:10]
    assert [rid for rid, _ in found] == expected
    assert [score for _, score in found] == pytest.approx(
        [float(live[rid] @ query) for rid in expected], abs=1e-3
    )
    assert working.neighbours(["ann"], max_fanout=25) == set()  # a hub the graph walk skips
    assert working.nearest_about(["nobody"], query, limit=10) == []


def test_pairs_above_finds_every_near_duplicate_of_each_record_across_scan_blocks() -> None:
    rng = np.random.default_rng(12)
    n = 20_000  # more rows than one widened block
    vectors = _unit(rng, n)
    near = [(5, 19_000), (17_500, 3), (9_000, 9_001)]
    for a, b in near:  # b becomes a near-duplicate of a
        vectors[b] = vectors[a] + 0.01 * _unit(rng, 1)[0]
        vectors[b] /= np.linalg.norm(vectors[b])
    working = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM)
    working.apply([Update(record(id=f"r{i}"), v) for i, v in enumerate(vectors)], [], 1)
    working.apply([], ["r9001"], 2)  # a removed duplicate is not found
    asked = ["r5", "r17500", "r9000", "r12"]

    pairs = working.pairs_above(asked, 0.99, chunk=3)

    held = vectors.astype(np.float16).astype(np.float32)
    expected = [
        (f"r{a}", f"r{b}")
        for a in (5, 17_500, 9_000, 12)
        for b in np.flatnonzero(held @ held[a] >= 0.99).tolist()
        if b not in (a, 9_001)
    ]
    assert [(a, b) for a, b, _ in pairs] == expected
    assert {(a, b) for a, b, _ in pairs} >= {("r5", "r19000"), ("r17500", "r3")}
    assert all(score >= 0.99 for _, _, score in pairs)


def _states(working: WorkingSet, queries: np.ndarray) -> dict[str, object]:
    """What a recall and the maintenance pass read from a set."""
    idf = {"fact": 0.3, "number": 0.2, "7": 1.5, "camp": 1.0}
    return {
        "records": dict(working.records),
        "by_entity": working.by_entity,
        "linked_from": working.linked_from,
        "search": working.search_many(queries, 15),
        "keywords": working.keyword_search(idf, 4.0, 20),
        "stats": working.keyword_stats(idf),
        "about": working.nearest_about(["ann", "bo"], queries[0], 10),
        "vectors": {rid: v.tolist() for rid, v in working.vectors(working.records).items()},
    }


@pytest.mark.parametrize("precision", [np.float32, np.float16])  # the Hot store's loads: half
@pytest.mark.parametrize("int8_min_rows", [0, 100])
def test_a_set_loaded_at_once_is_the_set_built_update_by_update(
    int8_min_rows: int, precision: type[np.floating]
) -> None:
    rng = np.random.default_rng(17)
    n = 400
    records = [
        record(
            id=f"r{i}",
            entity=("ann_hobby", "bo_work", "camp")[i % 3],
            content=f"fact number {i} about camping",
            related_entities=(("ann",), ("bo", "ann"), ())[i % 3],
        )
        for i in range(n)
    ]
    vectors = _unit(rng, n)
    loaded = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM, int8_scan_min_rows=int8_min_rows)
    built = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM, int8_scan_min_rows=int8_min_rows)
    loaded.load(records, vectors.astype(precision), 5)
    built.apply([Update(r, v) for r, v in zip(records, vectors, strict=True)], [], 5)
    queries = _unit(np.random.default_rng(2), 3)

    assert loaded.seq == built.seq == 5
    assert len(loaded) == len(built) == n
    assert _states(loaded, queries) == _states(built, queries)
    assert loaded.nbytes < built.nbytes  # postings in arrays, not dicts

    # Both then take the same changes alike, the loaded rows' included.
    moved = [Update(records[i].evolve(content=f"camp {i}"), vectors[-i]) for i in range(0, n, 7)]
    new = [Update(record(id=f"new{i}", entity="camp"), vectors[i]) for i in range(30)]
    for working in (loaded, built):
        working.apply([*moved, *new], [f"r{i}" for i in range(1, n, 5)], 6)
    assert _states(loaded, queries) == _states(built, queries)


def test_a_load_fills_only_an_empty_set_and_refuses_what_does_not_fit() -> None:
    rng = np.random.default_rng(3)
    records = [record(id=f"r{i}") for i in range(5)]
    working = WorkingSet(Scope("a", "c"), scope_pk=1, dim=DIM)
    with pytest.raises(ValueError, match="vectors must be"):
        working.load(records, _unit(rng, 4), 1)
    with pytest.raises(ValueError, match="twice"):
        working.load([*records, records[0]], _unit(rng, 6), 1)
    assert len(working) == 0
    assert working.seq == 0
    working.load(records, _unit(rng, 5), 1)
    with pytest.raises(ValueError, match="empty working set"):
        working.load([record(id="other")], _unit(rng, 1), 2)
    assert set(working.records) == {r.id for r in records}
    assert working.seq == 1

"""The Cold ROM on SQLite and PostgreSQL: keyword search, the log, scoping."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import event

from nmafc.core.events import Event, EventKind
from nmafc.core.scope import AgentScope, Scope
from nmafc.storage.cold import ColdStore
from nmafc.storage.cold.keyword import FactFilter
from nmafc.storage.cold.turns_repo import NewTurn

from ..core.factories import T0, record

A = Scope("agent-a", "c1")
A2 = Scope("agent-a", "c2")
B = Scope("agent-b", "c1")


@pytest.fixture
def store(cold_uri: str) -> Iterator[ColdStore]:
    opened = ColdStore.open(cold_uri)
    yield opened
    opened.close()


def _add_facts(store: ColdStore, scope: Scope, *contents: str) -> list[str]:
    records = [
        record(
            agent_id=scope.agent_id, conversation_id=scope.conversation_id, content=c, entity=c[:20]
        )
        for c in contents
    ]
    with store.write() as s:
        row = s.scopes.lock(scope)
        s.facts.insert_versions(row, records, {r.id: np.ones(4, np.float32) for r in records})
    return [r.id for r in records]


def test_keyword_search_is_an_or_of_stemmed_terms(store: ColdStore) -> None:
    ids = _add_facts(
        store,
        A,
        "Melanie is allergic to peanuts",
        "Caroline went to an LGBTQ support group",
        "The weather was nice",
    )
    with store.read() as s:
        hits = s.search.facts(A, "peanut allergy")
    assert [r.id for r, _ in hits] == [ids[0]]
    with store.read() as s:
        ranked = s.search.facts(A, "Caroline support peanuts")
    assert {r.id for r, _ in ranked} == {ids[0], ids[1]}
    assert ranked[0][1] >= ranked[-1][1]


def test_a_term_common_to_the_scope_does_not_crowd_out_the_rare_ones(store: ColdStore) -> None:
    chatter = _add_facts(store, A, *(f"Sam: thanks for topic{i}" for i in range(40)))
    allergy = _add_facts(store, A, "Alex is allergic to peanuts")
    question = "What did Sam say about peanuts?"
    with store.read() as s:
        pruned = s.search.facts(A, question, limit=5, corpus_size=41)
        every_term = s.search.facts(A, question, limit=5, corpus_size=20)
    # "sam" is in almost every fact of the scope: only "peanuts" decides.
    assert [r.id for r, _ in pruned] == allergy
    # A small scope is searched on every term, so Sam's facts match too.
    assert {r.id for r, _ in every_term} & set(chatter)


def test_when_every_term_is_common_all_of_them_are_searched(store: ColdStore) -> None:
    both = _add_facts(store, A, *(f"Sam and Alex talked about topic{i}" for i in range(30)))
    only_sam = _add_facts(store, A, *(f"Sam went home {i}" for i in range(10)))
    with store.read() as s:
        hits = s.search.facts(A, "Sam Alex", limit=50, corpus_size=70)
        rare = s.search.facts(A, "home Sam", limit=50, corpus_size=70)
    assert {r.id for r, _ in hits} == {*both, *only_sam}
    assert hits[0][0].id in both  # matching both terms ranks first
    assert {r.id for r, _ in rare} == set(only_sam)


def test_keyword_search_never_crosses_scopes(store: ColdStore) -> None:
    _add_facts(store, A, "Alice likes sushi")
    _add_facts(store, A2, "Alice likes sushi in another conversation")
    other = _add_facts(store, B, "Bob likes sushi")
    with store.read() as s:
        in_a = s.search.facts(A, "sushi")
        agent_wide = s.search.facts(AgentScope("agent-a"), "sushi")
        in_b = s.search.facts(B, "sushi")
    assert len(in_a) == 1
    assert len(agent_wide) == 2
    assert [r.id for r, _ in in_b] == other


def test_invalidated_versions_are_hidden_unless_asked_for(store: ColdStore) -> None:
    (rid,) = _add_facts(store, A, "Alice lives in Paris")
    with store.write() as s:
        current = s.facts.current(A, [rid])[rid]
        s.facts.update_state(
            A, [current.evolve(invalid_at=5.0, invalid_at_time=T0, invalid_reason="override")]
        )
    with store.read() as s:
        assert s.search.facts(A, "Paris") == []
        assert len(s.search.facts(A, "Paris", where=FactFilter(include_invalidated=True))) == 1
        assert len(s.search.facts(A, "Paris", where=FactFilter(as_of=1.0))) == 1
        assert s.search.facts(A, "Paris", where=FactFilter(as_of=5.0)) == []


def test_turn_search_hides_retracted_turns(store: ColdStore) -> None:
    with store.write() as s:
        row = s.scopes.lock(A)
        s.turns.insert(
            row,
            [
                NewTurn(1, "user", "Caroline", "I adopted a puppy named Oscar", T0),
                NewTurn(2, "user", "Caroline", "Oscar loves the beach", T0),
            ],
        )
    with store.read() as s:
        assert len(s.search.turns(A, "Oscar")) == 2
    with store.write() as s:
        assert s.turns.retract_after(A, 1) == 1
    with store.read() as s:
        assert [t.content for t, _ in s.search.turns(A, "Oscar")] == [
            "I adopted a puppy named Oscar"
        ]


def test_turn_search_with_a_known_row_id_finds_the_same_and_never_another_scope(
    store: ColdStore,
) -> None:
    with store.write() as s:
        rows = {scope: s.scopes.lock(scope) for scope in (A, B)}
        for scope, row in rows.items():
            s.turns.insert(row, [NewTurn(1, "user", "Jon", f"Oscar met {scope.agent_id}", T0)])
    with store.read() as s:
        looked_up = s.search.turns(A, "Oscar")
        given = s.search.turns(A, "Oscar", scope_pk=rows[A].pk)
        # A wrong row id (say, of a scope purged and re-created since) may miss rows
        # (SQLite's FTS uses it; PostgreSQL filters by columns only) but never leaks.
        wrong = s.search.turns(A, "Oscar", scope_pk=rows[B].pk)

    assert [t.content for t, _ in given] == [t.content for t, _ in looked_up]
    assert [t.content for t, _ in given] == ["Oscar met agent-a"]
    assert [t.content for t, _ in wrong] in ([], ["Oscar met agent-a"])


def test_events_append_in_sequence_and_replay_by_turn(store: ColdStore) -> None:
    r1, r2 = (
        record(agent_id="agent-a", conversation_id="c1"),
        record(agent_id="agent-a", conversation_id="c1"),
    )
    with store.write() as s:
        row = s.scopes.lock(A)
        stored, seq = s.events.append(
            row, [Event(EventKind.ADD, 1, (r1,), r1.id), Event(EventKind.ADD, 4, (r2,), r2.id)]
        )
        s.scopes.advance(row, turn=4, seq=seq)
    assert [e.seq for e in stored] == [1, 2]
    assert stored[0].id < stored[1].id
    with store.read() as s:
        assert [e.upserts[0].id for e in s.events.since(A, 1)] == [r2.id]
        assert [e.upserts[0].id for e in s.events.through_turn(A, 3)] == [r1.id]
        assert s.scopes.get(A).seq == 2  # type: ignore[union-attr]
        assert s.events.for_record(A, r2.id)[0].kind is EventKind.ADD


def test_the_log_since_a_seq_streams_in_batches_inside_a_write(store: ColdStore) -> None:
    records = [record(agent_id="agent-a", conversation_id="c1") for _ in range(7)]
    with store.write() as s:
        row = s.scopes.lock(A)
        _, seq = s.events.append(row, [Event(EventKind.ADD, 1, (r,), r.id) for r in records])
        s.scopes.advance(row, turn=1, seq=seq)
    with store.write() as s:
        row = s.scopes.lock(A)
        streamed = [e.upserts[0].id for e in s.events.stream_since(A, 2, batch=2)]
        s.scopes.mark_maintained(row, seq=row.seq, turn=row.turn)  # the session goes on
        listed = [e.upserts[0].id for e in s.events.since(A, 2)]
    assert streamed == listed == [r.id for r in records[2:]]


def test_event_ids_are_never_reused_after_a_purge(store: ColdStore) -> None:
    r = record(agent_id="agent-a", conversation_id="c1")
    with store.write() as s:
        row = s.scopes.lock(A)
        stored, _ = s.events.append(row, [Event(EventKind.ADD, 1, (r,), r.id)])
    with store.write() as s:
        s.events.delete(A)
        s.scopes.delete(A)
        tombstone = s.events.append_tombstone(A, {"deleted": {"events": 1}})
    assert tombstone > stored[0].id


def test_concurrent_sqlite_reads_reuse_pooled_connections(tmp_path: Path) -> None:
    store = ColdStore.open(f"sqlite:///{tmp_path / 'cold.db'}")
    opened = 0

    @event.listens_for(store.engine, "connect")
    def _count(*_: object) -> None:
        nonlocal opened
        opened += 1

    barrier = threading.Barrier(20)
    errors: list[BaseException] = []

    def reader() -> None:
        try:
            for _ in range(30):
                with store.read() as session:
                    barrier.wait(timeout=10)  # all 20 hold a connection at once
                    session.scopes.get(A)
        except BaseException as error:  # a thread's failure must fail the test
            errors.append(error)
            barrier.abort()

    try:
        threads = [threading.Thread(target=reader) for _ in range(20)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        store.close()
    assert errors == []  # 20 readers at once fit in the pool
    # Each of the 20 concurrent readers got a connection once, then reused it.
    assert opened <= 20


def test_without_pgvector_the_archive_is_ranked_by_one_streamed_scan(store: ColdStore) -> None:
    rng = np.random.default_rng(3)
    dim, count = 8, 2300  # more rows than one chunk of the scan
    vectors = rng.standard_normal((count, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    faded = [
        record(
            agent_id="agent-a",
            conversation_id=f"c{i % 2 + 1}",
            content=f"fact {i}",
            invalid_at=5.0,
            invalid_reason="archived" if i % 3 else "expired",
        )
        for i in range(count)
    ]
    edited = record(agent_id="agent-a", conversation_id="c1", content="edited", version=2)
    old = record(id=edited.id, agent_id="agent-a", conversation_id="c1", content="old",
                 invalid_at=2.0, invalid_reason="archived")  # fmt: skip
    other = record(agent_id="agent-b", conversation_id="c1", content="other", invalid_at=5.0,
                   invalid_reason="archived")  # fmt: skip
    query = vectors[7]
    with store.write() as s:
        for scope in (A, A2):
            row = s.scopes.lock(scope)
            mine = [r for r in faded if r.conversation_id == scope.conversation_id]
            s.facts.insert_versions(row, mine, {r.id: vectors[int(r.content[5:])] for r in mine})
        row = s.scopes.lock(A)
        s.facts.insert_versions(row, [old, edited], {edited.id: query, old.id: query})
        s.facts.insert_versions(s.scopes.lock(B), [other], {other.id: query})
    with store.read() as s:
        assert not store.vector_search
        wide = s.facts.nearest_decayed(AgentScope("agent-a"), query, 5)
        one = s.facts.nearest_decayed(A2, query, 3)
    best = np.argsort(-(vectors @ query), kind="stable")[:5]
    assert [r.content for r, _ in wide] == [f"fact {i}" for i in best]
    assert [c for _, c in wide] == pytest.approx([float(vectors[i] @ query) for i in best])
    assert all(r.conversation_id == "c2" for r, _ in one)  # c2 holds the odd facts
    assert [r.content for r, _ in one] == [f"fact {i}" for i in best if i % 2][:3]

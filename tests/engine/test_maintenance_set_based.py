"""A prune of many records costs a bounded number of statements in both stores (issue 25).

Statements are counted by an observer on the real SQLAlchemy engine
(``before_cursor_execute``); an ``executemany`` counts once per parameter set, since the
database runs the statement that many times.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from sqlalchemy import event
from sqlalchemy.engine.default import DefaultExecutionContext
from sqlalchemy.engine.interfaces import ExecuteStyle

from nmafc.core.events import EventKind
from nmafc.core.facts import FactDraft
from nmafc.core.lifecycle import InvalidReason, invalidate, plan_prune
from nmafc.core.records import utcnow
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.engine.engine import MemoryEngine

from .helpers import assert_consistent, let_turns_pass

N = 3000


def _drafts(n: int, tier: Tier = Tier.EPHEMERAL_STATE) -> list[FactDraft]:
    rng = np.random.default_rng(25)
    vectors = rng.standard_normal((n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        FactDraft(f"Caroline noted detail number {i}", f"detail_{i}", tier, vector=vectors[i])
        for i in range(n)
    ]


@contextmanager
def _executions(engine: MemoryEngine) -> Iterator[list[tuple[str, int]]]:
    """``(statement, times the database runs it)`` for every cursor call while open."""
    seen: list[tuple[str, int]] = []

    def count(_conn: Any, _cursor: Any, statement: str, parameters: Any,
              context: DefaultExecutionContext, executemany: bool) -> None:  # fmt: skip
        # A multi-row INSERT (insertmanyvalues) is one statement whatever its parameters.
        many = executemany and context.execute_style is ExecuteStyle.EXECUTEMANY
        seen.append((statement, len(parameters) if many else 1))

    target = engine.ctx.cold.engine
    event.listen(target, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(target, "before_cursor_execute", count)


def _facts_updates(seen: list[tuple[str, int]]) -> int:
    return sum(n for s, n in seen if s.lstrip().upper().startswith("UPDATE FACTS"))


def test_expiring_thousands_of_records_is_a_few_statements_and_one_lance_commit(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.ingest(scope, _drafts(N // 2, Tier.CORE_ANCHOR) + _drafts(N))
    let_turns_pass(engine, scope, 5)
    before = engine.ctx.hot.store.shape()["version"]
    with _executions(engine) as seen:
        report = engine.maintain(scope)
    assert report.expired == N
    # One UPDATE for all N closings (one turn, instant and reason; the ids bound as one
    # parameter), and one prune event per 1,000 records named by id; then the archive,
    # cached since the scope's first write, reads the N closed facts and their vectors in
    # one query each: the whole pass under 16 statements, whatever N.
    assert _facts_updates(seen) == 1
    assert sum(n for _, n in seen) <= 16, [(s[:80], n) for s, n in seen if n > 1]
    row = engine.ctx.row(scope)
    archived = engine.ctx.archive.cached(row) if row is not None else None
    assert archived is not None
    assert len(archived) == N
    assert report.expired == N
    # Hot: the N removals travel in one merge_insert, one new table version.
    assert engine.ctx.hot.store.shape()["version"] == before + 1
    assert engine.ctx.hot.store.count(scope) == N // 2
    assert_consistent(engine, scope)


def test_closing_set_based_leaves_the_rows_closing_record_by_record_leaves(
    engine: MemoryEngine,
) -> None:
    one, other = Scope("agent-set", "c1"), Scope("agent-set", "c2")
    for scope in (one, other):
        engine.ingest(scope, _drafts(300) + _drafts(200, Tier.ACTIVE_CONTEXT))
        let_turns_pass(engine, scope, 600)  # Ephemeral ones expire, ActiveContext archive
    at = utcnow()
    with engine.ctx.cold.write() as session:
        now = session.scopes.get(one).turn  # type: ignore[union-attr]
        plans = {s: plan_prune(session.facts.expiring(s, now), now, at) for s in (one, other)}
        closed = {s: [*p.expired, *p.archived] for s, p in plans.items()}
        assert len(closed[one]) == len(closed[other]) == 500
        assert {c.invalid_reason for c in closed[one]} == {"expired", "archived"}
        with _executions(engine) as seen:
            assert session.facts.close_versions(one, closed[one]) == 500
        assert _facts_updates(seen) == 2  # one per reason, whatever the number of ids
        # The per-record path: each whole record, invalidated, written back.
        records = session.facts.current(other, [c.id for c in closed[other]])
        session.facts.update_state(
            other,
            [
                invalidate(records[c.id], c.invalid_at, at, InvalidReason(c.invalid_reason))
                for c in closed[other]
            ],
        )
    assert _rows(engine, one) == _rows(engine, other)


def _rows(engine: MemoryEngine, scope: Scope) -> list[tuple[Any, ...]]:
    """The scope's latest fact versions by content, without the ids that differ by scope."""
    with engine.ctx.cold.read() as session:
        page = session.facts.page(scope, limit=10_000, include_invalidated=True)
    return sorted(
        (r.content, r.version, r.tier, r.invalid_at, r.invalid_at_time, r.invalid_reason,
         r.weight0, r.anchor_turn, r.k, r.importance, r.expires_turn, r.related_entities)
        for _, r in page
    )  # fmt: skip


def test_a_big_prune_logs_one_event_per_thousand_records_and_history_still_shows_it(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.ingest(scope, _drafts(10, Tier.CORE_ANCHOR) + _drafts(N))
    let_turns_pass(engine, scope, 5)
    with engine.ctx.cold.read() as session:
        before = session.scopes.get(scope).seq  # type: ignore[union-attr]
    report = engine.maintain(scope)
    assert report.expired == N
    with engine.ctx.cold.read() as session:
        logged = session.events.since(scope, before)
        pruned = session.facts.page(scope, limit=N + 10, include_invalidated=True)
    prunes = [e for e in logged if e.kind is EventKind.PRUNE]
    # N records in ceil(N / 1,000) events naming them by id, no copies of their state.
    assert len(prunes) == -(-N // 1000)
    assert sum(len(e.closed) for e in prunes) == N
    assert all(e.upserts == () and e.detail == {"reason": "expired"} for e in prunes)
    # A pruned record's history: the prune with its reason, and its last state.
    gone = next(r for _, r in pruned if r.invalid_reason == "expired")
    history = engine.history(scope, gone.id)
    assert [e.kind for e in history.events] == [EventKind.ADD, EventKind.PRUNE]
    assert history.events[-1].detail == {"reason": "expired"}
    assert gone.id in history.events[-1].closed
    last = history.versions[-1]
    assert (last.invalid_reason, last.content, last.weight0) == ("expired", gone.content, 1.0)
    # The log still folds to what the stores hold, and a rollback to after the prune
    # keeps the pruned records out.
    assert_consistent(engine, scope)
    let_turns_pass(engine, scope, 1)
    engine.ingest(scope, _drafts(1, Tier.CORE_ANCHOR))
    engine.rollback(scope, report.turn)
    assert len(engine.working_set(scope)) == 10
    assert_consistent(engine, scope)


def test_a_closing_that_finds_its_record_already_closed_writes_nothing(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.ingest(scope, _drafts(3))
    let_turns_pass(engine, scope, 5)
    with engine.ctx.cold.read() as session:
        row = session.scopes.get(scope)
        assert row is not None
        plan = plan_prune(session.facts.expiring(scope, row.turn), row.turn, utcnow())
    stale = plan.expired[0]
    engine.forget(scope, stale.id)  # closed by someone else since the plan was read
    before = _rows(engine, scope)
    with pytest.raises(RuntimeError, match="found 2 open"):
        with engine.ctx.cold.write() as session:
            session.facts.close_versions(scope, plan.expired)
    assert _rows(engine, scope) == before  # the transaction rolled back whole

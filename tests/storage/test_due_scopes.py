"""Maintenance finds the scopes it is due for with one indexed query, across every agent."""

from __future__ import annotations

import time

from sqlalchemy import text

from nmafc.core.scope import Scope
from nmafc.storage.cold import ColdStore

EVERY = 10.0


def _write(store: ColdStore, scope: Scope, turns: float, maintained: float = 0.0) -> None:
    with store.write() as session:
        row = session.scopes.lock(scope)
        row = session.scopes.advance(row, turn=turns, seq=int(turns))
        if maintained:
            session.scopes.mark_maintained(row, seq=int(maintained), turn=maintained)


def test_the_due_scopes_of_every_agent_come_least_recently_written_first(cold_uri: str) -> None:
    store = ColdStore.open(cold_uri)
    try:
        _write(store, Scope("a", "older"), turns=12)
        time.sleep(0.01)
        _write(store, Scope("b", "quiet"), turns=9)  # moved 9 < 10 turns: not due
        _write(store, Scope("c", "maintained"), turns=25, maintained=20)  # 5 since its pass
        time.sleep(0.01)
        _write(store, Scope("d", "newer"), turns=40, maintained=20)
        with store.read() as session:
            assert session.scopes.due(EVERY, 10) == [Scope("a", "older"), Scope("d", "newer")]
            assert session.scopes.due(EVERY, 1) == [Scope("a", "older")]
            assert session.scopes.due(EVERY, 0) == []
    finally:
        store.close()


def test_the_due_query_is_answered_from_its_index(cold_uri: str) -> None:
    store = ColdStore.open(cold_uri)
    try:
        for i in range(50):
            _write(store, Scope(f"agent-{i}", "c"), turns=i)
        with store.engine.connect() as conn:
            if store.dialect == "postgresql":
                conn.execute(text("SET enable_seqscan = off"))  # small tables: force the choice
                conn.execute(text("ANALYZE scopes"))
                plan = conn.execute(
                    text(
                        "EXPLAIN SELECT agent_id, conversation_id FROM scopes "
                        "WHERE turn - maintained_turn >= 10 ORDER BY updated_at LIMIT 5"
                    )
                ).scalars()
            else:
                plan = conn.execute(
                    text(
                        "EXPLAIN QUERY PLAN SELECT scopes.agent_id, scopes.conversation_id "
                        "FROM scopes WHERE scopes.turn - scopes.maintained_turn >= 10 "
                        "ORDER BY scopes.updated_at LIMIT 5"
                    )
                ).all()
            said = " ".join(str(line) for line in plan)
        assert "ix_scopes_unmaintained" in said, said
    finally:
        store.close()

"""No query on tenant data runs without an agent filter: checked on every SQL statement."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import event

from nmafc.core.scope import AgentScope, Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.live import ColdEventLog

TENANT_TABLES = ("turns", "facts", "events", "scopes", "pending_exchanges", "fact_vectors")
# The deliberate cross-tenant reads: start-up recovery lists every agent once, maintenance
# lists the scopes it is due for (their ids), and the live tail reads event ids (ids only:
# which were committed, never what or whose).
ALLOWED = re.compile(
    r"SELECT DISTINCT scopes\.agent_id\s+FROM scopes\s*$"
    r"|^SELECT scopes\.agent_id, scopes\.conversation_id FROM scopes "
    r"WHERE scopes\.turn - scopes\.maintained_turn >= \S+ ORDER BY scopes\.updated_at "
    r"LIMIT \S+( OFFSET \S+)?$"
    r"|^SELECT (events\.id|max\(events\.id\) AS \w+) FROM events"
    r"( WHERE events\.id (> \S+|IN \(.*\))( ORDER BY events\.id LIMIT \S+( OFFSET \S+)?)?)?$",
    re.I,
)


def _touches_tenant_table(sql: str) -> bool:
    return any(re.search(rf"\b(FROM|INTO|UPDATE|JOIN)\s+{t}\b", sql, re.I) for t in TENANT_TABLES)


def test_every_statement_on_tenant_tables_filters_by_agent(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    assert unscoped_statements(engine, tmp_path) == []


def unscoped_statements(
    engine: MemoryEngine, tmp_path: Path, must_touch: str = "facts"
) -> list[str]:
    """Run every engine operation; return tenant-table statements without an agent filter."""
    statements: list[str] = []

    @event.listens_for(engine.ctx.cold.engine, "before_cursor_execute")
    def _capture(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        statements.append(" ".join(statement.split()))

    scope = Scope("agent-scoped", "c1")
    result = engine.remember(
        scope, [_msg("Alice adopted a dog named Rex"), _msg("Rex loves parks")]
    )
    engine.recall(scope, "dog", RecallOptions(reinforce=True))
    engine.recall(AgentScope("agent-scoped"), "dog", RecallOptions(reinforce=False))
    engine.recall(scope, "dog", RecallOptions(as_of=1.0, reinforce=False))
    engine.update(scope, result.added[0].id, content="Alice adopted a dog named Max")
    engine.history(scope, result.added[0].id)
    engine.stats(scope)
    engine.events(scope)
    engine.page(scope, include_invalidated=True)
    engine.page(AgentScope("agent-scoped"), tier="ActiveContext", entity="x")
    engine.graph(AgentScope("agent-scoped"))
    engine.due_scopes()
    engine.preload(10)
    engine.maintain(scope)
    engine.export_snapshot(scope, tmp_path / "snap.json")
    engine.forget(scope, result.added[1].id)
    engine.rollback(scope, 1)
    engine.purge(scope)
    engine.purge(AgentScope("agent-scoped"))
    engine.ctx.hot.recover()
    log = ColdEventLog(engine.ctx.cold)
    log.of_agents(["agent-scoped"], log.present(log.ids_after(log.last_id() - 5, 100)))

    tenant_sql = [s for s in statements if _touches_tenant_table(s) and not ALLOWED.search(s)]
    assert len(tenant_sql) > 30
    assert any(re.search(rf"\b(FROM|JOIN)\s+{must_touch}\b", s, re.I) for s in tenant_sql)
    # INSERTs carry agent_id as a column; every read, update and delete filters on it.
    return [
        s
        for s in tenant_sql
        if not s.upper().startswith("INSERT") and not re.search(r"\bagent_id\s*(=|IN)", s)
    ]


def _msg(text: str):  # type: ignore[no-untyped-def]
    from nmafc.core.turns import Message

    return Message(text, speaker="Alice")


@pytest.mark.parametrize("bad", ["x' OR '1'='1", "a/b", ""])
def test_identifiers_that_could_escape_a_filter_never_reach_a_store(bad: str) -> None:
    from nmafc.errors import InvalidScope

    with pytest.raises(InvalidScope):
        Scope(bad, "c")

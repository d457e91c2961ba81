"""The ``scopes`` table: one row per (agent, conversation) holding its clock and log position."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from nmafc.core.records import utcnow
from nmafc.core.scope import AgentScope, AnyScope, Scope
from nmafc.storage.cold.filters import scope_params, where_scope, where_scope_bound
from nmafc.storage.cold.schema import scopes


@dataclass(frozen=True, slots=True)
class ScopeRow:
    """A scope's identity (``pk`` changes if it is purged and re-created) and clock."""

    pk: int
    scope: Scope
    turn: float
    seq: int
    maintained_seq: int
    maintained_turn: float


def _row(r: object) -> ScopeRow:
    return ScopeRow(
        pk=int(r.id),  # type: ignore[attr-defined]
        scope=Scope(r.agent_id, r.conversation_id),  # type: ignore[attr-defined]
        turn=float(r.turn),  # type: ignore[attr-defined]
        seq=int(r.seq),  # type: ignore[attr-defined]
        maintained_seq=int(r.maintained_seq),  # type: ignore[attr-defined]
        maintained_turn=float(r.maintained_turn),  # type: ignore[attr-defined]
    )


# Read on every recall: built once, so a call only binds the two values.
_BY_SCOPE = select(scopes).where(where_scope_bound(scopes))


class ScopesRepo:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def get(self, scope: Scope) -> ScopeRow | None:
        """The scope's row, or None if it has never been written."""
        row = self._conn.execute(_BY_SCOPE, scope_params(scope)).first()
        return None if row is None else _row(row)

    def lock(self, scope: Scope) -> ScopeRow:
        """Get or create the row and lock it for this transaction (serialises writers)."""
        now = utcnow()
        values = {
            "agent_id": scope.agent_id,
            "conversation_id": scope.conversation_id,
            "turn": 0.0,
            "seq": 0,
            "maintained_seq": 0,
            "maintained_turn": 0.0,
            "created_at": now,
            "updated_at": now,
        }
        dialect = self._conn.dialect.name
        insert = pg_insert(scopes) if dialect == "postgresql" else sqlite_insert(scopes)
        self._conn.execute(
            insert.values(**values).on_conflict_do_nothing(
                index_elements=["agent_id", "conversation_id"]
            )
        )
        query = select(scopes).where(where_scope(scopes, scope))
        if dialect == "postgresql":
            query = query.with_for_update()
        return _row(self._conn.execute(query).one())

    def advance(self, row: ScopeRow, *, turn: float, seq: int) -> ScopeRow:
        """Move the scope's clock and log position forward."""
        self._conn.execute(
            update(scopes)
            .where(where_scope(scopes, row.scope), scopes.c.id == row.pk)
            .values(turn=turn, seq=seq, updated_at=utcnow())
        )
        return ScopeRow(row.pk, row.scope, turn, seq, row.maintained_seq, row.maintained_turn)

    def mark_maintained(self, row: ScopeRow, *, seq: int, turn: float) -> None:
        self._conn.execute(
            update(scopes)
            .where(where_scope(scopes, row.scope), scopes.c.id == row.pk)
            .values(maintained_seq=seq, maintained_turn=turn)
        )

    def of(self, scope: AnyScope) -> list[ScopeRow]:
        """The scopes of an agent (or the one scope)."""
        rows = self._conn.execute(
            select(scopes).where(where_scope(scopes, scope)).order_by(scopes.c.id)
        )
        return [_row(r) for r in rows]

    def agents(self) -> list[str]:
        """Every agent id: the one deliberately cross-tenant read (recovery, maintenance)."""
        return list(self._conn.execute(select(scopes.c.agent_id).distinct()).scalars().all())

    def list_all_for_recovery(self) -> list[ScopeRow]:
        """Every scope, for start-up replay only."""
        return [row for agent in self.agents() for row in self.of(AgentScope(agent))]

    def recent_among(self, agents: Sequence[str], limit: int) -> list[ScopeRow]:
        """Scopes of these agents, the most recently written first."""
        if not agents or limit <= 0:
            return []
        rows = self._conn.execute(
            select(scopes)
            .where(scopes.c.agent_id.in_(list(agents)))
            .order_by(scopes.c.updated_at.desc(), scopes.c.id.desc())
            .limit(limit)
        )
        return [_row(r) for r in rows]

    def due(self, every_turns: float, limit: int) -> list[Scope]:
        """Scopes whose clock moved ``every_turns`` since their last pass, least recently
        written first: the maintenance service's one cross-tenant read, of ids only, through
        ``ix_scopes_unmaintained`` (each scope's row is then read under its own agent)."""
        if limit <= 0:
            return []
        rows = self._conn.execute(
            select(scopes.c.agent_id, scopes.c.conversation_id)
            .where(scopes.c.turn - scopes.c.maintained_turn >= every_turns)
            .order_by(scopes.c.updated_at)
            .limit(limit)
        )
        return [Scope(agent, conversation) for agent, conversation in rows]

    def count(self, scope: AnyScope) -> int:
        return int(
            self._conn.execute(
                select(func.count()).select_from(scopes).where(where_scope(scopes, scope))
            ).scalar_one()
        )

    def delete(self, scope: AnyScope) -> int:
        return int(self._conn.execute(delete(scopes).where(where_scope(scopes, scope))).rowcount)

"""The ``turns`` table: every message verbatim, the source for hydration and keyword search."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, delete, func, select, true, update
from sqlalchemy.engine import Connection

from nmafc.core.records import utcnow
from nmafc.core.scope import AnyScope, Scope
from nmafc.core.turns import Turn
from nmafc.storage.cold.filters import where_scope
from nmafc.storage.cold.schema import turns
from nmafc.storage.cold.scopes_repo import ScopeRow


@dataclass(frozen=True, slots=True)
class NewTurn:
    turn: float
    role: str
    speaker: str
    content: str
    occurred_at: datetime
    extra: dict[str, Any] | None = None


def turn_from_row(r: Any) -> Turn:
    return Turn(
        id=int(r.id),
        agent_id=r.agent_id,
        conversation_id=r.conversation_id,
        turn=float(r.turn),
        role=r.role,
        speaker=r.speaker,
        content=r.content,
        occurred_at=r.occurred_at,
        extra=r.extra or {},
        retracted=bool(r.retracted),
    )


_COLUMNS = (
    turns.c.id,
    turns.c.agent_id,
    turns.c.conversation_id,
    turns.c.turn,
    turns.c.role,
    turns.c.speaker,
    turns.c.content,
    turns.c.occurred_at,
    turns.c.extra,
    turns.c.retracted,
)


class TurnsRepo:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def insert(self, row: ScopeRow, new: Sequence[NewTurn]) -> list[Turn]:
        """Insert in order; returns the stored turns with their ids."""
        if not new:
            return []
        now = utcnow()
        params = [
            {
                "scope_id": row.pk,
                "agent_id": row.scope.agent_id,
                "conversation_id": row.scope.conversation_id,
                "turn": t.turn,
                "role": t.role,
                "speaker": t.speaker,
                "content": t.content,
                "occurred_at": t.occurred_at,
                "created_at": now,
                "extra": t.extra,
                "retracted": False,
            }
            for t in new
        ]
        ids = (
            self._conn.execute(
                turns.insert().returning(turns.c.id, sort_by_parameter_order=True), params
            )
            .scalars()
            .all()
        )
        return [
            Turn(
                id=int(i),
                agent_id=row.scope.agent_id,
                conversation_id=row.scope.conversation_id,
                turn=t.turn,
                role=t.role,
                speaker=t.speaker,
                content=t.content,
                occurred_at=t.occurred_at,
                extra=t.extra or {},
            )
            for i, t in zip(ids, new, strict=True)
        ]

    def by_ids(
        self, scope: AnyScope, ids: Sequence[int], *, said: ColumnElement[bool] | None = None
    ) -> dict[int, Turn]:
        """The turns with these ids; with ``said``, only those said by a point in time."""
        if not ids:
            return {}
        rows = self._conn.execute(
            select(*_COLUMNS).where(
                where_scope(turns, scope), turns.c.id.in_(list(set(ids))), _said(said)
            )
        )
        return {int(r.id): turn_from_row(r) for r in rows}

    def page(
        self,
        scope: AnyScope,
        *,
        after_id: int = 0,
        limit: int = 1000,
        include_retracted: bool = False,
    ) -> list[Turn]:
        query = select(*_COLUMNS).where(where_scope(turns, scope), turns.c.id > after_id)
        if not include_retracted:
            query = query.where(turns.c.retracted.is_(False))
        rows = self._conn.execute(query.order_by(turns.c.id).limit(limit))
        return [turn_from_row(r) for r in rows]

    def neighbours(self, scope: Scope, turn_id: int, before: int, after: int) -> list[Turn]:
        """The turns around ``turn_id`` in the same conversation, in order."""
        lower = (
            select(*_COLUMNS)
            .where(where_scope(turns, scope), turns.c.id < turn_id, turns.c.retracted.is_(False))
            .order_by(turns.c.id.desc())
            .limit(before)
        )
        upper = (
            select(*_COLUMNS)
            .where(where_scope(turns, scope), turns.c.id >= turn_id, turns.c.retracted.is_(False))
            .order_by(turns.c.id)
            .limit(after + 1)
        )
        rows = list(self._conn.execute(lower)) + list(self._conn.execute(upper))
        return sorted((turn_from_row(r) for r in rows), key=lambda t: t.id)

    def said_between(
        self,
        scope: AnyScope,
        start: datetime,
        end: datetime,
        *,
        limit: int = 100,
        said: ColumnElement[bool] | None = None,
    ) -> list[Turn]:
        """Turns said in ``[start, end]`` (not retracted), oldest first; ``said`` as in by_ids."""
        rows = self._conn.execute(
            select(*_COLUMNS)
            .where(
                where_scope(turns, scope),
                turns.c.occurred_at >= start,
                turns.c.occurred_at <= end,
                turns.c.retracted.is_(False),
                _said(said),
            )
            .order_by(turns.c.id)
            .limit(limit)
        )
        return [turn_from_row(r) for r in rows]

    def replies(
        self, scope: AnyScope, asked: Sequence[Turn], *, said: ColumnElement[bool] | None = None
    ) -> dict[int, Turn]:
        """The turn right after each of ``asked`` in its own conversation (the reply).

        With ``said`` a reply counts only if it was said by that point in time.
        """
        found: dict[int, Turn] = {}
        for turn in asked:
            reply = self._conn.execute(
                select(*_COLUMNS).where(
                    where_scope(turns, scope),
                    turns.c.conversation_id == turn.conversation_id,
                    turns.c.turn == turn.turn + 1,
                    turns.c.retracted.is_(False),
                    _said(said),
                )
            ).first()
            if reply is not None:
                found[turn.id] = turn_from_row(reply)
        return found

    def retract_after(self, scope: Scope, turn: float) -> int:
        """Hide turns later than ``turn`` (rollback); rows stay for the record."""
        result = self._conn.execute(
            update(turns)
            .where(where_scope(turns, scope), turns.c.turn > turn, turns.c.retracted.is_(False))
            .values(retracted=True)
        )
        return int(result.rowcount)

    def retract_ids(self, scope: Scope, ids: Sequence[int], *, retracted: bool = True) -> int:
        """Hide (or show again) specific turns: a forgotten fact's sources, or a rollback."""
        if not ids:
            return 0
        result = self._conn.execute(
            update(turns)
            .where(where_scope(turns, scope), turns.c.id.in_(list(ids)))
            .values(retracted=retracted)
        )
        return int(result.rowcount)

    def count(self, scope: AnyScope, *, include_retracted: bool = False) -> int:
        query = select(func.count()).select_from(turns).where(where_scope(turns, scope))
        if not include_retracted:
            query = query.where(turns.c.retracted.is_(False))
        return int(self._conn.execute(query).scalar_one())

    def delete(self, scope: AnyScope) -> int:
        return int(self._conn.execute(delete(turns).where(where_scope(turns, scope))).rowcount)


def _said(said: ColumnElement[bool] | None) -> ColumnElement[bool]:
    return true() if said is None else said

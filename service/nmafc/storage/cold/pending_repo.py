"""The ``pending_exchanges`` table: the chat proxy's durable queue of exchanges to remember.

An exchange is inserted (and committed) before the caller is told its reply is complete;
it is claimed — ``done_at`` set — inside the same transaction that stores its turns and
facts, so a crash either leaves it queued (remembered later) or done (never again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, select, update
from sqlalchemy.engine import Connection

from nmafc.core.records import utcnow
from nmafc.core.scope import AnyScope, Scope
from nmafc.storage.cold.filters import where_scope
from nmafc.storage.cold.schema import pending_exchanges as pending

MAX_ERROR_CHARS = 2000


@dataclass(frozen=True, slots=True)
class PendingExchange:
    """One queued exchange: its messages as stored (JSON objects) and its delivery state."""

    id: int
    scope: Scope
    messages: list[dict[str, Any]]
    created_at: datetime
    attempts: int
    last_error: str | None
    done_at: datetime | None


def _row(r: Any) -> PendingExchange:
    return PendingExchange(
        id=int(r.id),
        scope=Scope(r.agent_id, r.conversation_id),
        messages=list(r.messages),
        created_at=r.created_at,
        attempts=int(r.attempts),
        last_error=r.last_error,
        done_at=r.done_at,
    )


class PendingRepo:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def enqueue(self, scope: Scope, messages: Sequence[dict[str, Any]]) -> int:
        """Queue one exchange; returns its id."""
        return int(
            self._conn.execute(
                pending.insert().returning(pending.c.id),
                {
                    "agent_id": scope.agent_id,
                    "conversation_id": scope.conversation_id,
                    "messages": list(messages),
                    "created_at": utcnow(),
                    "attempts": 0,
                },
            ).scalar_one()
        )

    def undone(
        self, scope: AnyScope, *, max_attempts: int | None = None, limit: int = 100
    ) -> list[PendingExchange]:
        """Exchanges of the scope (or agent) not yet remembered, oldest first."""
        query = select(pending).where(where_scope(pending, scope), pending.c.done_at.is_(None))
        if max_attempts is not None:
            query = query.where(pending.c.attempts < max_attempts)
        rows = self._conn.execute(query.order_by(pending.c.id).limit(limit))
        return [_row(r) for r in rows]

    def get(self, scope: AnyScope, item_id: int) -> PendingExchange | None:
        row = self._conn.execute(
            select(pending).where(where_scope(pending, scope), pending.c.id == item_id)
        ).first()
        return None if row is None else _row(row)

    def claim(self, scope: Scope, item_id: int) -> bool:
        """Mark the exchange done; False if it was done already (someone else remembered it)."""
        result = self._conn.execute(
            update(pending)
            .where(where_scope(pending, scope), pending.c.id == item_id)
            .where(pending.c.done_at.is_(None))
            .values(done_at=utcnow())
        )
        return int(result.rowcount) == 1

    def record_failure(self, scope: Scope, item_id: int, error: str) -> None:
        """Count a failed attempt and keep its reason (the item stays queued)."""
        self._conn.execute(
            update(pending)
            .where(where_scope(pending, scope), pending.c.id == item_id)
            .values(attempts=pending.c.attempts + 1, last_error=error[:MAX_ERROR_CHARS])
        )

    def agents_with_work(self) -> list[str]:
        """Agents with undone exchanges: the queue's one deliberately cross-tenant read."""
        query = select(pending.c.agent_id).where(pending.c.done_at.is_(None)).distinct()
        return list(self._conn.execute(query).scalars().all())

    def count(self, scope: AnyScope, *, done: bool | None = None) -> int:
        query = select(func.count()).select_from(pending).where(where_scope(pending, scope))
        if done is not None:
            query = query.where(
                pending.c.done_at.is_not(None) if done else pending.c.done_at.is_(None)
            )
        return int(self._conn.execute(query).scalar_one())

    def prune_done(self, scope: AnyScope, before: datetime) -> int:
        """Forget exchanges remembered before ``before`` (their turns hold the content)."""
        condition = and_(pending.c.done_at.is_not(None), pending.c.done_at < before)
        result = self._conn.execute(delete(pending).where(where_scope(pending, scope), condition))
        return int(result.rowcount)

    def delete(self, scope: AnyScope) -> int:
        """Every queued exchange of the scope (purge: the right to be forgotten)."""
        return int(self._conn.execute(delete(pending).where(where_scope(pending, scope))).rowcount)

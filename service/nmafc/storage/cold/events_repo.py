"""The ``events`` table: the append-only log every change goes through."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import Select, delete, func, select
from sqlalchemy.engine import Connection

from nmafc.core.events import Event, EventKind
from nmafc.core.records import utcnow
from nmafc.core.scope import AnyScope, Scope
from nmafc.storage.cold.filters import where_scope
from nmafc.storage.cold.schema import events
from nmafc.storage.cold.scopes_repo import ScopeRow


def event_from_row(r: Any) -> Event:
    return Event.from_row(
        kind=r.kind,
        turn=float(r.turn),
        payload=r.payload,
        record_id=r.record_id,
        seq=int(r.seq),
        id=int(r.id),
        created_at=r.created_at,
        agent_id=r.agent_id,
        conversation_id=r.conversation_id,
    )


class EventsRepo:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def append(self, row: ScopeRow, new: Sequence[Event]) -> tuple[list[Event], int]:
        """Append after the scope's current ``seq``; returns the stored events and the new seq."""
        if not new:
            return [], row.seq
        now = utcnow()
        params = [
            {
                "agent_id": row.scope.agent_id,
                "conversation_id": row.scope.conversation_id,
                "seq": row.seq + offset,
                "turn": event.turn,
                "kind": event.kind.value,
                "record_id": event.record_id,
                "payload": event.payload(),
                "created_at": now,
            }
            for offset, event in enumerate(new, start=1)
        ]
        # RETURNING the seq with the id, not in parameter order: SQLite cannot promise
        # that order for a multi-row INSERT, so asking for it makes SQLAlchemy insert one
        # row per statement (a prune logs an event per record it closes).
        returned = self._conn.execute(events.insert().returning(events.c.id, events.c.seq), params)
        by_seq = {int(seq): int(event_id) for event_id, seq in returned}
        ids = [by_seq[row.seq + offset] for offset in range(1, len(new) + 1)]
        stored = [
            replace(
                event,
                seq=row.seq + offset,
                id=int(event_id),
                created_at=now,
                agent_id=row.scope.agent_id,
                conversation_id=row.scope.conversation_id,
            )
            for offset, (event, event_id) in enumerate(zip(new, ids, strict=True), start=1)
        ]
        return stored, row.seq + len(new)

    def append_tombstone(self, scope: AnyScope, detail: dict[str, Any], turn: float = 0.0) -> int:
        """A content-free purge marker. It keeps no seq slot: the purged scope has no log left."""
        conversation = scope.conversation_id if isinstance(scope, Scope) else "*"
        # A negative seq cannot collide with a live scope's log (which starts at 1).
        low = self._conn.execute(
            select(func.min(events.c.seq)).where(
                events.c.agent_id == scope.agent_id, events.c.conversation_id == conversation
            )
        ).scalar()
        seq = min(int(low or 0), 0) - 1
        event_id = self._conn.execute(
            events.insert().returning(events.c.id),
            {
                "agent_id": scope.agent_id,
                "conversation_id": conversation,
                "seq": seq,
                "turn": turn,
                "kind": EventKind.PURGE.value,
                "record_id": None,
                "payload": {"upserts": [], "detail": detail},
                "created_at": utcnow(),
            },
        ).scalar_one()
        return int(event_id)

    def by_ids(self, scope: AnyScope, ids: Sequence[int]) -> list[Event]:
        """Specific events (of this scope or agent) by id, in id order."""
        if not ids:
            return []
        rows = self._conn.execute(
            select(events)
            .where(where_scope(events, scope), events.c.id.in_(list(ids)))
            .order_by(events.c.id)
        )
        return [event_from_row(r) for r in rows]

    def ids_after(self, after_id: int, limit: int) -> list[int]:
        """Ids of the log's events after ``after_id``, in id order, across every agent.

        With :meth:`present`, the live tail's cross-tenant reads: ids only, no tenant data,
        so a process learns that events were committed (by it or by another replica) and
        then reads those of the agents it streams with :meth:`of_agents`.
        """
        query = select(events.c.id).where(events.c.id > after_id)
        rows = self._conn.execute(query.order_by(events.c.id).limit(limit))
        return [int(event_id) for event_id in rows.scalars()]

    def last_id(self) -> int:
        """The highest id in the log (0 when empty); ids only, see :meth:`ids_after`."""
        return int(self._conn.execute(select(func.max(events.c.id))).scalar() or 0)

    def present(self, ids: Sequence[int]) -> list[int]:
        """Which of ``ids`` are in the log now (ids only; see :meth:`ids_after`)."""
        if not ids:
            return []
        rows = self._conn.execute(select(events.c.id).where(events.c.id.in_(list(ids))))
        return sorted(int(event_id) for event_id in rows.scalars())

    def of_agents(self, agent_ids: Sequence[str], ids: Sequence[int]) -> list[Event]:
        """The events among ``ids`` that belong to ``agent_ids``, in id order."""
        if not ids or not agent_ids:
            return []
        rows = self._conn.execute(
            select(events)
            .where(events.c.agent_id.in_(list(agent_ids)), events.c.id.in_(list(ids)))
            .order_by(events.c.id)
        )
        return [event_from_row(r) for r in rows]

    def since(self, scope: Scope, seq: int, limit: int | None = None) -> list[Event]:
        """Events after ``seq``, in order."""
        query = _after(scope, seq)
        if limit is not None:
            query = query.limit(limit)
        return [event_from_row(r) for r in self._conn.execute(query)]

    def stream_since(self, scope: Scope, seq: int, batch: int = 64) -> Iterator[Event]:
        """Events after ``seq``, in order, read ``batch`` rows at a time (a server-side
        cursor on PostgreSQL): the log since a pass over a bulk-loaded scope names every
        record it added, 1.3 KB each as events, which a list would hold all at once.
        Consume it before the next statement of the session."""
        for r in self._conn.execute(_after(scope, seq).execution_options(yield_per=batch)):
            yield event_from_row(r)

    def through_turn(self, scope: Scope, turn: float) -> list[Event]:
        """Events stamped at or before ``turn``, in log order (the replay for rollback)."""
        rows = self._conn.execute(
            select(events)
            .where(where_scope(events, scope), events.c.turn <= turn, events.c.seq > 0)
            .order_by(events.c.seq)
        )
        return [event_from_row(r) for r in rows]

    def after_turn(self, scope: Scope, turn: float, kinds: Sequence[str]) -> list[Event]:
        """Events of the given kinds stamped after ``turn`` (what a rollback undoes)."""
        rows = self._conn.execute(
            select(events)
            .where(
                where_scope(events, scope),
                events.c.turn > turn,
                events.c.seq > 0,
                events.c.kind.in_(list(kinds)),
            )
            .order_by(events.c.seq)
        )
        return [event_from_row(r) for r in rows]

    def for_record(self, scope: AnyScope, record_id: str) -> list[Event]:
        rows = self._conn.execute(
            select(events)
            .where(where_scope(events, scope), events.c.record_id == record_id)
            .order_by(events.c.id)
        )
        return [event_from_row(r) for r in rows]

    def closing(self, scope: AnyScope, record_id: str, since: datetime, wanted: int) -> list[Event]:
        """The first ``wanted`` prune events stamped at or after ``since`` that closed
        ``record_id`` by id (their ``closed``), in log order.

        A prune names the records it closes in its payload, not in ``record_id``; the
        version row's ``invalid_at_time`` (taken just before those events were logged, in
        the same transaction) says where to start looking.
        """
        if wanted <= 0:
            return []
        rows = self._conn.execute(
            select(events)
            .where(
                where_scope(events, scope),
                events.c.record_id.is_(None),
                events.c.kind == EventKind.PRUNE.value,
                events.c.created_at >= since,
                events.c.seq > 0,
            )
            .order_by(events.c.id)
        )
        found: list[Event] = []
        for r in rows:
            if record_id in r.payload.get("closed", ()):
                found.append(event_from_row(r))
                if len(found) == wanted:
                    break
        rows.close()
        return found

    def recent(
        self,
        scope: AnyScope,
        *,
        after_id: int = 0,
        limit: int = 100,
        kinds: Sequence[str] | None = None,
    ) -> list[Event]:
        """Events after ``after_id``, oldest first; ``after_id=0`` gives the newest ``limit``."""
        query = select(events).where(where_scope(events, scope))
        if kinds:
            query = query.where(events.c.kind.in_(list(kinds)))
        if after_id:
            query = query.where(events.c.id > after_id).order_by(events.c.id).limit(limit)
            return [event_from_row(r) for r in self._conn.execute(query)]
        query = query.order_by(events.c.id.desc()).limit(limit)
        return [event_from_row(r) for r in reversed(list(self._conn.execute(query)))]

    def counts_by_kind(self, scope: AnyScope) -> dict[str, int]:
        rows = self._conn.execute(
            select(events.c.kind, func.count())
            .where(where_scope(events, scope))
            .group_by(events.c.kind)
        )
        return {kind: int(n) for kind, n in rows}

    def delete(self, scope: AnyScope) -> int:
        """Delete the scope's log; earlier purge tombstones (seq < 0) stay."""
        statement = delete(events).where(where_scope(events, scope), events.c.seq > 0)
        return int(self._conn.execute(statement).rowcount)


def _after(scope: Scope, seq: int) -> Select[Any]:
    """The scope's events after ``seq``, in log order."""
    return (
        select(events).where(where_scope(events, scope), events.c.seq > seq).order_by(events.c.seq)
    )

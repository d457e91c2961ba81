"""The event log's vocabulary and the fold that turns a log back into memory.

Every change to a scope is one event. An event carries the full post-change snapshot of
each record it touched (``upserts``); a snapshot that is no longer valid takes the record
out of the working set. An event may instead name records it only closed (``closed``):
they leave the working set too, and their last state is their version row in the Cold
ROM — a prune of 10^5 records logs their ids, not 10^5 copies of what the table holds.
Replaying a log is therefore a left fold with no knowledge of *why* things changed — which
is what lets rollback, crash recovery and a rebuilt Hot store agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from nmafc.core.records import MemoryRecord, utcnow


class EventKind(StrEnum):
    """What happened."""

    TURN = "turn"
    ADD = "add"
    UPDATE = "update"
    INVALIDATE = "invalidate"
    REINFORCE = "reinforce"
    PRUNE = "prune"
    ELEVATE = "elevate"
    MERGE = "merge"
    RELINK = "relink"
    DELETE = "delete"
    ROLLBACK = "rollback"
    PURGE = "purge"
    IMPORT = "import"


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of a scope's log. ``seq`` orders events within the scope.

    ``agent_id`` / ``conversation_id`` name the scope an event was read from or published
    for (an agent-wide purge tombstone has conversation ``*``); they take no part in
    equality, since the log position is what identifies an event.
    """

    kind: EventKind
    turn: float
    upserts: tuple[MemoryRecord, ...] = ()
    record_id: str | None = None
    closed: tuple[str, ...] = ()
    """Ids of records the event took out of the working set without a snapshot."""
    detail: Mapping[str, Any] = field(default_factory=dict)
    seq: int = 0
    id: int = 0
    created_at: datetime = field(default_factory=utcnow)
    agent_id: str | None = field(default=None, compare=False)
    conversation_id: str | None = field(default=None, compare=False)

    def payload(self) -> dict[str, Any]:
        """The JSON stored in the log."""
        payload: dict[str, Any] = {
            "upserts": [r.to_payload() for r in self.upserts],
            "detail": dict(self.detail),
        }
        if self.closed:
            payload["closed"] = list(self.closed)
        return payload

    @classmethod
    def from_row(
        cls,
        *,
        kind: str,
        turn: float,
        payload: Mapping[str, Any],
        record_id: str | None,
        seq: int,
        id: int,
        created_at: datetime,
        agent_id: str | None = None,
        conversation_id: str | None = None,
    ) -> Event:
        """Rebuild an event read back from the log."""
        return cls(
            kind=EventKind(kind),
            turn=turn,
            upserts=tuple(MemoryRecord.from_payload(p) for p in payload.get("upserts", ())),
            record_id=record_id,
            closed=tuple(payload.get("closed", ())),
            detail=payload.get("detail", {}),
            seq=seq,
            id=id,
            created_at=created_at,
            agent_id=agent_id,
            conversation_id=conversation_id,
        )


WorkingSet = dict[str, MemoryRecord]


def apply(state: WorkingSet, event: Event) -> WorkingSet:
    """Apply one event to ``state`` in place: valid snapshots are kept, the rest leave."""
    for record_id in event.closed:
        state.pop(record_id, None)
    for record in event.upserts:
        if record.is_valid:
            state[record.id] = record
        else:
            state.pop(record.id, None)
    return state


def fold(events: Iterable[Event], state: WorkingSet | None = None) -> WorkingSet:
    """The working set (valid records by id) after ``events``, in order."""
    result: WorkingSet = {} if state is None else state
    for event in events:
        apply(result, event)
    return result


@dataclass(frozen=True, slots=True)
class Changes:
    """The net effect of a run of events on the working set."""

    upserts: dict[str, MemoryRecord]
    removed: set[str]


def net_changes(events: Iterable[Event]) -> Changes:
    """Collapse events into last-write-wins upserts and removals, for one batched write."""
    upserts: dict[str, MemoryRecord] = {}
    removed: set[str] = set()
    for event in events:
        for record_id in event.closed:
            upserts.pop(record_id, None)
            removed.add(record_id)
        for record in event.upserts:
            if record.is_valid:
                upserts[record.id] = record
                removed.discard(record.id)
            else:
                upserts.pop(record.id, None)
                removed.add(record.id)
    return Changes(upserts, removed)


def diff(current: Mapping[str, MemoryRecord], target: Mapping[str, MemoryRecord]) -> Changes:
    """What turns working set ``current`` into ``target`` (used by rollback)."""
    upserts = {rid: rec for rid, rec in target.items() if current.get(rid) != rec}
    removed = {rid for rid in current if rid not in target}
    return Changes(upserts, removed)

"""A change set: everything one operation writes, applied to the Cold ROM in one transaction."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from nmafc.core.events import Event, EventKind
from nmafc.core.lifecycle import Closing
from nmafc.core.records import MemoryRecord
from nmafc.storage.cold import ColdSession, ScopeRow

Vector = npt.NDArray[np.float32]


@dataclass
class ChangeSet:
    """Events to log, fact versions to insert (with vectors) and version rows to update."""

    events: list[Event] = field(default_factory=list)
    inserted: list[MemoryRecord] = field(default_factory=list)
    updated: list[MemoryRecord] = field(default_factory=list)
    closings: list[Closing] = field(default_factory=list)
    vectors: dict[tuple[str, int], Vector] = field(default_factory=dict)
    turn: float | None = None

    def log(
        self,
        kind: EventKind,
        turn: float,
        *records: MemoryRecord,
        record_id: str | None = None,
        detail: Mapping[str, Any] | None = None,
        closed: tuple[str, ...] = (),
    ) -> None:
        """Record an event whose upserts are ``records`` (and that closes ``closed``)."""
        if record_id is None and len(records) == 1 and not closed:
            record_id = records[0].id
        self.events.append(
            Event(
                kind=kind,
                turn=turn,
                upserts=records,
                record_id=record_id,
                closed=closed,
                detail=detail or {},
            )
        )

    def add_version(self, record: MemoryRecord, vector: Vector) -> None:
        """A new row in ``facts``: a new record, or a new content version of one."""
        self.inserted.append(record)
        self.vectors[(record.id, record.version)] = vector

    def update(self, *records: MemoryRecord) -> None:
        """In-place state of existing version rows (strength, tier, links, validity)."""
        self.updated.extend(records)

    def close_all(self, closings: Iterable[Closing]) -> None:
        """Close valid versions read in this transaction and changed in nothing else:
        written set-based, and logged by id (:meth:`log`'s ``closed``), not copied."""
        self.closings.extend(closings)

    def __bool__(self) -> bool:
        return bool(self.events)

    def apply(self, session: ColdSession, row: ScopeRow) -> tuple[ScopeRow, list[Event]]:
        """Write to the Cold ROM (the caller's transaction commits); returns the stored events."""
        session.facts.insert_versions(
            row, self.inserted, {r.id: self.vectors[(r.id, r.version)] for r in self.inserted}
        )
        session.facts.update_state(row.scope, _last_per_version(self.updated))
        session.facts.close_versions(row.scope, self.closings)
        stored, seq = session.events.append(row, self.events)
        turn = row.turn if self.turn is None else max(row.turn, self.turn)
        if seq != row.seq or turn != row.turn:
            row = session.scopes.advance(row, turn=turn, seq=seq)
        return row, stored


def _last_per_version(records: list[MemoryRecord]) -> list[MemoryRecord]:
    latest: dict[tuple[str, int], MemoryRecord] = {}
    for record in records:
        latest[(record.id, record.version)] = record
    return list(latest.values())

"""A scope's records held column by column; each becomes a :class:`MemoryRecord` when read.

A cached working set holds every live record of its scope. As objects, 10^5 records took
≈ 0.6 s to build from the Hot table's Arrow columns and ≈ 540 bytes each of RAM, most of
it for fields a search never reads. Here the numbers are arrays, the texts one UTF-8 buffer
with offsets, and repeated strings (entities, tiers) codes into one list of values; a
record is assembled from them only when someone asks for it (≈ 6.5 µs; a recall at 10^5
records reads about 60).

All records of one set share their agent and conversation (they are one scope's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from nmafc.core.records import MemoryRecord
from nmafc.core.tiers import Tier

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True, eq=False)
class RecordColumns:
    """Row ``i`` of every column is record ``i``'s; ``*_ends`` are offsets (length n + 1).

    The records are live ones: none carries an invalidation.
    """

    ids: list[str]
    agent_id: str
    conversation_id: str
    entity_codes: Ints  # into ``values``
    related_ends: Ints
    related_codes: Ints  # into ``values``
    values: list[str]  # the distinct entities, whether a record is about one or links it
    tier_codes: Ints  # into ``tiers``
    tiers: list[Tier]
    content_ends: Ints  # byte offsets into ``content_bytes``
    content_bytes: bytes
    weight0: Floats
    anchor_turn: Floats
    k: Ints
    importance: Floats
    source_ends: Ints
    source_turns: Ints
    valid_at: Floats
    valid_at_micros: Ints  # since the epoch, UTC
    created_at_micros: Ints
    expires_turn: Floats  # inf: never
    version: Ints

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        arrays = (
            self.entity_codes,
            self.related_ends,
            self.related_codes,
            self.tier_codes,
            self.content_ends,
            self.weight0,
            self.anchor_turn,
            self.k,
            self.importance,
            self.source_ends,
            self.source_turns,
            self.valid_at,
            self.valid_at_micros,
            self.created_at_micros,
            self.expires_turn,
            self.version,
        )
        return sum(a.nbytes for a in arrays) + len(self.content_bytes)

    def entities(self) -> list[str]:
        """Each row's entity, in row order."""
        values = self.values
        return [values[code] for code in self.entity_codes.tolist()]

    def contents(self) -> list[str]:
        """Each row's content, in row order."""
        ends, data = self.content_ends.tolist(), self.content_bytes
        return [data[a:b].decode() for a, b in zip(ends, ends[1:], strict=False)]

    def source_turns_of(self, rows: npt.NDArray[np.intp]) -> Ints:
        """The source turn ids of ``rows``, concatenated."""
        starts, stops = self.source_ends[rows], self.source_ends[rows + 1]
        lengths = stops - starts
        if not int(lengths.sum()):
            return np.zeros(0, dtype=np.int64)
        offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
        picks = np.arange(int(lengths.sum())) - offsets + np.repeat(starts, lengths)
        found: Ints = self.source_turns[picks]
        return found

    def record(self, row: int) -> MemoryRecord:
        # ``array.item(row)`` gives the Python number directly, without a NumPy scalar.
        ends, sources = self.content_ends, self.source_ends
        start, stop = self.related_ends.item(row), self.related_ends.item(row + 1)
        values = self.values
        return MemoryRecord(
            id=self.ids[row],
            agent_id=self.agent_id,
            conversation_id=self.conversation_id,
            entity=values[self.entity_codes.item(row)],
            content=self.content_bytes[ends.item(row) : ends.item(row + 1)].decode(),
            tier=self.tiers[self.tier_codes.item(row)],
            weight0=self.weight0.item(row),
            anchor_turn=self.anchor_turn.item(row),
            k=self.k.item(row),
            importance=self.importance.item(row),
            related_entities=tuple(values[c] for c in self.related_codes[start:stop].tolist()),
            source_turn_ids=tuple(
                self.source_turns[sources.item(row) : sources.item(row + 1)].tolist()
            ),
            valid_at=self.valid_at.item(row),
            valid_at_time=EPOCH + self.valid_at_micros.item(row) * _MICROSECOND,
            created_at=EPOCH + self.created_at_micros.item(row) * _MICROSECOND,
            expires_turn=self.expires_turn.item(row),
            version=self.version.item(row),
        )

    @classmethod
    def of(cls, records: Sequence[MemoryRecord]) -> RecordColumns:
        """The columns of ``records`` (live ones, of one scope, with aware times)."""
        scope = (records[0].agent_id, records[0].conversation_id) if records else ("", "")
        if any((r.agent_id, r.conversation_id) != scope for r in records):
            raise ValueError("the records of one RecordColumns are one scope's")
        if any(r.invalid_at is not None for r in records):
            raise ValueError("RecordColumns holds live records; an invalidated one came")
        values: dict[str, int] = {}
        tiers: dict[Tier, int] = {}
        related = [[values.setdefault(e, len(values)) for e in r.related_entities] for r in records]
        contents = [r.content.encode() for r in records]
        return cls(
            ids=[r.id for r in records],
            agent_id=scope[0],
            conversation_id=scope[1],
            entity_codes=np.array(
                [values.setdefault(r.entity, len(values)) for r in records], dtype=np.int64
            ),
            related_ends=ends_of([len(codes) for codes in related]),
            related_codes=np.array([c for codes in related for c in codes], dtype=np.int64),
            values=list(values),
            tier_codes=np.array(
                [tiers.setdefault(r.tier, len(tiers)) for r in records], dtype=np.int64
            ),
            tiers=list(tiers),
            content_ends=ends_of([len(data) for data in contents]),
            content_bytes=b"".join(contents),
            weight0=np.array([r.weight0 for r in records], dtype=np.float64),
            anchor_turn=np.array([r.anchor_turn for r in records], dtype=np.float64),
            k=np.array([r.k for r in records], dtype=np.int64),
            importance=np.array([r.importance for r in records], dtype=np.float64),
            source_ends=ends_of([len(r.source_turn_ids) for r in records]),
            source_turns=np.array([t for r in records for t in r.source_turn_ids], dtype=np.int64),
            valid_at=np.array([r.valid_at for r in records], dtype=np.float64),
            valid_at_micros=np.array(
                [(r.valid_at_time - EPOCH) // _MICROSECOND for r in records], dtype=np.int64
            ),
            created_at_micros=np.array(
                [(r.created_at - EPOCH) // _MICROSECOND for r in records], dtype=np.int64
            ),
            expires_turn=np.array([r.expires_turn for r in records], dtype=np.float64),
            version=np.array([r.version for r in records], dtype=np.int64),
        )


def ends_of(lengths: Sequence[int] | npt.NDArray[np.integer]) -> Ints:
    """The offsets (length n + 1) at which each of n runs of ``lengths`` items ends."""
    ends = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ends[1:])
    return ends

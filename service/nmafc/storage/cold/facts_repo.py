"""The ``facts`` table: every version of every fact, with its embedding and current state."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt
from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Text,
    and_,
    any_,
    bindparam,
    delete,
    func,
    select,
    true,
    update,
)
from sqlalchemy.engine import Connection

from nmafc.core.lifecycle import DECAYED, Closing
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import AnyScope, Scope
from nmafc.core.tiers import Tier, parse_tier
from nmafc.storage.cold.filters import where_scope
from nmafc.storage.cold.schema import facts
from nmafc.storage.cold.scopes_repo import ScopeRow
from nmafc.storage.cold.vectors import FactVectors

Vector = npt.NDArray[np.float32]

RECORD_COLUMNS = tuple(c for c in facts.c if c.name not in ("embedding", "id", "scope_id"))


def record_from_row(r: Any) -> MemoryRecord:
    return MemoryRecord(
        id=r.record_id,
        agent_id=r.agent_id,
        conversation_id=r.conversation_id,
        entity=r.entity,
        content=r.content,
        tier=parse_tier(r.tier),
        weight0=float(r.weight0),
        anchor_turn=float(r.anchor_turn),
        k=int(r.k),
        importance=float(r.importance),
        related_entities=tuple(r.related_entities or ()),
        source_turn_ids=tuple(int(t) for t in r.source_turn_ids or ()),
        valid_at=float(r.valid_at),
        valid_at_time=r.valid_at_time,
        invalid_at=None if r.invalid_at is None else float(r.invalid_at),
        invalid_at_time=r.invalid_at_time,
        invalid_reason=r.invalid_reason,
        created_at=r.created_at,
        expires_turn=math.inf if r.expires_turn is None else float(r.expires_turn),
        version=int(r.version),
    )


def _state(record: MemoryRecord) -> dict[str, Any]:
    """The columns that change in place over a version's life."""
    return {
        "tier": record.tier.value,
        "importance": record.importance,
        "related_entities": list(record.related_entities),
        "source_turn_ids": list(record.source_turn_ids),
        "invalid_at": record.invalid_at,
        "invalid_at_time": record.invalid_at_time,
        "invalid_reason": record.invalid_reason,
        "weight0": record.weight0,
        "anchor_turn": record.anchor_turn,
        "k": record.k,
        "expires_turn": None if math.isinf(record.expires_turn) else record.expires_turn,
    }


_SCAN_ROWS = 2048  # rows per chunk of a streamed vector scan
# (record id, version) pairs per set-based UPDATE: 2 bound values each, well inside
# SQLite's 32,766 and PostgreSQL's 65,535 parameters per statement.
_IDS_PER_STATEMENT = 2000


def _decayed_latest() -> ColumnElement[bool]:
    """Versions that are their record's latest and left the working set by decay."""
    newer = facts.alias("newer")
    latest = (
        ~select(newer.c.id)
        .where(newer.c.record_id == facts.c.record_id, newer.c.version > facts.c.version)
        .exists()
    )
    return and_(facts.c.invalid_reason.in_(sorted(DECAYED)), latest)


class DecayTerms(NamedTuple):
    scope_pk: int
    tier: Tier
    k: int
    weight0: float
    anchor_turn: float


class ExpiringRow(NamedTuple):
    """What a prune reads of a valid record at the prune line (no content, no vector)."""

    id: str
    version: int
    entity: str
    tier: Tier
    expires_turn: float

    @property
    def is_valid(self) -> bool:
        return True  # :meth:`FactsRepo.expiring` reads valid versions only


class FactsRepo:
    def __init__(self, conn: Connection, vectors: FactVectors | None = None) -> None:
        self._conn = conn
        self._vectors = vectors

    def insert_versions(
        self, row: ScopeRow, records: Sequence[MemoryRecord], vectors: Mapping[str, Vector]
    ) -> None:
        """Insert new versions (new records, or new content of existing ones)."""
        if not records:
            return
        params = []
        for record in records:
            vector = vectors.get(record.id)
            params.append(
                {
                    "record_id": record.id,
                    "version": record.version,
                    "scope_id": row.pk,
                    "agent_id": row.scope.agent_id,
                    "conversation_id": row.scope.conversation_id,
                    "entity": record.entity,
                    "content": record.content,
                    "valid_at": record.valid_at,
                    "valid_at_time": record.valid_at_time,
                    "created_at": record.created_at,
                    "embedding": None
                    if vector is None
                    else np.asarray(vector, dtype="<f4").tobytes(),
                    **_state(record),
                }
            )
        if self._vectors is None:
            self._conn.execute(facts.insert(), params)
            return
        inserted = self._conn.execute(
            facts.insert().returning(facts.c.id, facts.c.record_id, facts.c.version), params
        )
        by_key = {(r.record_id, int(r.version)): int(r.id) for r in inserted}
        self._vectors.insert(
            [
                (by_key[(r.id, r.version)], row.scope.agent_id, row.scope.conversation_id,
                 vectors[r.id])
                for r in records
                if vectors.get(r.id) is not None
            ]
        )  # fmt: skip

    def update_state(self, scope: Scope, records: Sequence[MemoryRecord]) -> None:
        """Write the in-place state of each record's current version (one executemany)."""
        if not records:
            return
        statement = (
            update(facts)
            .where(
                facts.c.agent_id == bindparam("b_agent"),
                facts.c.conversation_id == bindparam("b_conversation"),
                facts.c.record_id == bindparam("b_record"),
                facts.c.version == bindparam("b_version"),
            )
            .values({name: bindparam(f"v_{name}") for name in _state(records[0])})
        )
        params = [
            {
                "b_agent": scope.agent_id,
                "b_conversation": scope.conversation_id,
                "b_record": r.id,
                "b_version": r.version,
                **{f"v_{k}": v for k, v in _state(r).items()},
            }
            for r in records
        ]
        self._conn.execute(statement, params)

    def close_versions(self, scope: Scope, closings: Sequence[Closing]) -> int:
        """Write closings of valid record versions read in this transaction, set-based.

        Each version's ``invalid_at``, ``invalid_at_time`` and ``invalid_reason`` are set;
        its other columns stay as stored. Closings alike (a prune closes 10^5 records at
        one turn and instant, for two reasons) share one ``UPDATE`` whose record ids are
        bound as one parameter (a JSON array on SQLite, a text array on PostgreSQL), not
        one statement per record nor one parameter per id. A record has one valid
        version, so its id names the version; every closing must find its row open, or
        the write raises and the transaction rolls back. Returns the rows updated.
        """
        alike: dict[tuple[Any, ...], list[str]] = {}
        for c in closings:
            alike.setdefault((c.invalid_at, c.invalid_at_time, c.invalid_reason), []).append(c.id)
        updated = 0
        for (at, at_time, reason), ids in alike.items():
            statement = (
                update(facts)
                .where(
                    where_scope(facts, scope),
                    self._one_of(facts.c.record_id, ids),
                    facts.c.invalid_at.is_(None),
                )
                .values(invalid_at=at, invalid_at_time=at_time, invalid_reason=reason)
            )
            rows = int(self._conn.execute(statement).rowcount)
            if rows != len(set(ids)):
                raise RuntimeError(
                    f"closing {len(set(ids))} records of {scope} found {rows} open; "
                    "nothing was written"
                )
            updated += rows
        return updated

    def _one_of(self, column: ColumnElement[str], values: Sequence[str]) -> ColumnElement[bool]:
        """``column IN values``, the values bound as one parameter however many."""
        if self._conn.dialect.name == "postgresql":
            return column == any_(bindparam("values", list(values), ARRAY(Text), unique=True))
        each = func.json_each(bindparam("values", json.dumps(list(values)), unique=True))
        return column.in_(select(each.table_valued("value").c.value))

    def current(self, scope: AnyScope, record_ids: Iterable[str]) -> dict[str, MemoryRecord]:
        """The latest version of each record (valid or not)."""
        ids = list(set(record_ids))
        if not ids:
            return {}
        rows = self._conn.execute(
            select(*RECORD_COLUMNS)
            .where(where_scope(facts, scope), facts.c.record_id.in_(ids))
            .order_by(facts.c.version)
        )
        return {r.record_id: record_from_row(r) for r in rows}

    def versions(self, scope: AnyScope, record_id: str) -> list[MemoryRecord]:
        """Every version of one record, oldest first."""
        rows = self._conn.execute(
            select(*RECORD_COLUMNS)
            .where(where_scope(facts, scope), facts.c.record_id == record_id)
            .order_by(facts.c.version)
        )
        return [record_from_row(r) for r in rows]

    def valid(self, scope: AnyScope) -> list[MemoryRecord]:
        """Every currently valid record (the working set, from the source of truth)."""
        rows = self._conn.execute(
            select(*RECORD_COLUMNS).where(where_scope(facts, scope), facts.c.invalid_at.is_(None))
        )
        return [record_from_row(r) for r in rows]

    def valid_versions(self, scope: Scope) -> dict[str, int]:
        """``{record id: version}`` of every valid record (what Hot must hold)."""
        rows = self._conn.execute(
            select(facts.c.record_id, facts.c.version).where(
                where_scope(facts, scope), facts.c.invalid_at.is_(None)
            )
        )
        return {r.record_id: int(r.version) for r in rows}

    def valid_by_entity(self, scope: AnyScope, entities: Iterable[str]) -> list[MemoryRecord]:
        names = list(set(entities))
        if not names:
            return []
        rows = self._conn.execute(
            select(*RECORD_COLUMNS).where(
                where_scope(facts, scope),
                facts.c.entity.in_(names),
                facts.c.invalid_at.is_(None),
            )
        )
        return [record_from_row(r) for r in rows]

    def expiring(self, scope: Scope, now: float, limit: int = 100_000) -> list[ExpiringRow]:
        """Valid records whose weight has reached the prune line (an indexed range query).

        Only the columns a prune decides on: it closes the rows in place, and reading
        10^5 whole records to do so was most of a big pass.
        """
        rows = self._conn.execute(
            select(
                facts.c.record_id,
                facts.c.version,
                facts.c.entity,
                facts.c.tier,
                facts.c.expires_turn,
            )
            .where(
                where_scope(facts, scope),
                facts.c.expires_turn.is_not(None),
                facts.c.expires_turn <= now,
                facts.c.invalid_at.is_(None),
            )
            .limit(limit)
        )
        return [
            ExpiringRow(rid, int(version), entity, parse_tier(tier), float(expires))
            for rid, version, entity, tier, expires in rows
        ]

    def promotable(self, scope: Scope, min_k: int) -> list[MemoryRecord]:
        rows = self._conn.execute(
            select(*RECORD_COLUMNS).where(
                where_scope(facts, scope),
                facts.c.k >= min_k,
                facts.c.tier == Tier.ACTIVE_CONTEXT.value,
                facts.c.invalid_at.is_(None),
            )
        )
        return [record_from_row(r) for r in rows]

    def vectors(
        self, scope: AnyScope, wanted: Iterable[tuple[str, int]]
    ) -> dict[tuple[str, int], Vector]:
        """Embeddings of the given (record id, version) pairs."""
        pairs = set(wanted)
        if not pairs:
            return {}
        rows = self._conn.execute(
            select(facts.c.record_id, facts.c.version, facts.c.embedding).where(
                where_scope(facts, scope),
                facts.c.record_id.in_(list({rid for rid, _ in pairs})),
                facts.c.embedding.is_not(None),
            )
        )
        out: dict[tuple[str, int], Vector] = {}
        for r in rows:
            key = (r.record_id, int(r.version))
            if key in pairs:
                out[key] = np.frombuffer(r.embedding, dtype="<f4").astype(np.float32)
        return out

    def matching(
        self, scope: AnyScope, where: ColumnElement[bool]
    ) -> tuple[list[MemoryRecord], Vector]:
        """Fact versions passing ``where`` with their embeddings (point-in-time vector scans)."""
        rows = list(
            self._conn.execute(
                select(*RECORD_COLUMNS, facts.c.embedding)
                .where(where_scope(facts, scope), where, facts.c.embedding.is_not(None))
                .order_by(facts.c.id)
            )
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)  # callers check the record list
        matrix = np.stack([np.frombuffer(r.embedding, dtype="<f4") for r in rows])
        return [record_from_row(r) for r in rows], matrix.astype(np.float32)

    def nearest_decayed(
        self, scope: AnyScope, query: Vector, limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        """Archived or expired facts nearest ``query``: ``(record, cosine)``, best first.

        With pgvector the database ranks them; otherwise one streamed scan of the scope's
        (or agent's) decayed facts keeps the best ``limit`` in memory as it goes, so memory
        stays at a chunk of rows however large the archive is.
        """
        if limit <= 0:
            return []
        if self._vectors is not None:
            hits = self._vectors.nearest_decayed(scope, query, limit, RECORD_COLUMNS)
            return [(record_from_row(row), cosine) for row, cosine in hits]
        q = np.asarray(query, dtype=np.float32)
        statement = (
            select(*RECORD_COLUMNS, facts.c.embedding)
            .where(where_scope(facts, scope), _decayed_latest(), facts.c.embedding.is_not(None))
            .order_by(facts.c.id)  # equal cosines keep one order from call to call
            .execution_options(yield_per=_SCAN_ROWS)
        )
        best: list[tuple[float, Any]] = []
        for part in self._conn.execute(statement).partitions():
            matrix = np.stack([np.frombuffer(r.embedding, dtype="<f4") for r in part])
            scores = matrix.astype(np.float32) @ q
            best += [(float(score), r) for score, r in zip(scores, part, strict=True)]
            best.sort(key=lambda hit: -hit[0])
            del best[limit:]
        return [(record_from_row(r), score) for score, r in best]

    def decayed(self, scope: Scope) -> tuple[list[MemoryRecord], Vector]:
        """Records whose latest version left the working set by decay, with embeddings."""
        return self.matching(scope, _decayed_latest())

    def all_versions(self, scope: Scope) -> tuple[list[MemoryRecord], Vector]:
        """Every version of every fact in the scope, with embeddings, oldest first."""
        return self.matching(scope, true())

    def page(
        self,
        scope: AnyScope,
        *,
        after: int = 0,
        limit: int = 50,
        tier: Tier | None = None,
        entity: str | None = None,
        include_invalidated: bool = False,
    ) -> list[tuple[int, MemoryRecord]]:
        """One page of current records in insertion order, each with its row id (the cursor)."""
        query = select(facts.c.id.label("row_id"), *RECORD_COLUMNS).where(
            where_scope(facts, scope), facts.c.id > after
        )
        if include_invalidated:
            newer = facts.alias("newer")
            query = query.where(
                ~select(newer.c.id)
                .where(newer.c.record_id == facts.c.record_id, newer.c.version > facts.c.version)
                .exists()
            )
        else:
            query = query.where(facts.c.invalid_at.is_(None))
        if tier is not None:
            query = query.where(facts.c.tier == tier.value)
        if entity is not None:
            query = query.where(facts.c.entity == entity)
        rows = self._conn.execute(query.order_by(facts.c.id).limit(limit))
        return [(int(r.row_id), record_from_row(r)) for r in rows]

    def decay_terms(self, scope: AnyScope) -> Iterator[DecayTerms]:
        """What the weight of every valid record depends on, streamed (no records built).

        Agent-wide statistics read these instead of loading each conversation's working
        set, so their memory stays at a chunk of rows however many conversations there are.
        """
        query = select(
            facts.c.scope_id, facts.c.tier, facts.c.k, facts.c.weight0, facts.c.anchor_turn
        ).where(where_scope(facts, scope), facts.c.invalid_at.is_(None))
        rows = self._conn.execution_options(yield_per=2000).execute(query)
        for r in rows:
            yield DecayTerms(
                int(r.scope_id), parse_tier(r.tier), int(r.k), float(r.weight0), r.anchor_turn
            )

    def counts_by_tier(self, scope: AnyScope) -> dict[str, int]:
        rows = self._conn.execute(
            select(facts.c.tier, func.count())
            .where(where_scope(facts, scope), facts.c.invalid_at.is_(None))
            .group_by(facts.c.tier)
        )
        return {tier: int(n) for tier, n in rows}

    def count_invalid(self, scope: AnyScope) -> dict[str, int]:
        rows = self._conn.execute(
            select(facts.c.invalid_reason, func.count())
            .where(where_scope(facts, scope), facts.c.invalid_at.is_not(None))
            .group_by(facts.c.invalid_reason)
        )
        return {str(reason): int(n) for reason, n in rows}

    def delete(self, scope: AnyScope) -> int:
        return int(self._conn.execute(delete(facts).where(where_scope(facts, scope))).rowcount)

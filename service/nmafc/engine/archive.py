"""The archive: facts that decayed out of the working set, still searchable by meaning.

Decay orders recall but never hides (SPEC §7): a pruned ActiveContext fact or an expired
EphemeralState remark is cold, not false. These records leave the Hot store, and this RAM
index over the Cold ROM keeps them reachable by vector search (keyword search reaches them
in the Cold ROM directly). Derived data, like the working set: loaded from the Cold ROM and
kept in step from the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from nmafc.core.events import Event
from nmafc.core.lifecycle import is_decayed
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import AnyScope, Scope
from nmafc.engine.fresh_sets import FreshSets
from nmafc.index.working_set import Update, WorkingSet, WorkingSetCache
from nmafc.storage.cold import ColdStore, ScopeRow


class Archive:
    """Per-scope RAM indexes of decayed records, least recently used first to go."""

    def __init__(
        self, cold: ColdStore, cache: WorkingSetCache, dim: int, int8_scan_min_rows: int = 0
    ) -> None:
        self.cold = cold
        self.cache = cache
        self.dim = dim
        self.int8_scan_min_rows = int8_scan_min_rows
        self._sets = FreshSets(cache)
        self.loads = 0  # archives built from the Cold ROM (a statistic)

    def index(self, row: ScopeRow) -> WorkingSet:
        """The scope's archive, at least as fresh as ``row``."""
        return self._sets.get(
            row, lambda cached: self._load(row) if cached is None else self._caught_up(row, cached)
        )

    def cached(self, row: ScopeRow) -> WorkingSet | None:
        """The scope's archive if RAM holds it as fresh as ``row`` (nothing is loaded)."""
        return self._sets.peek(row)

    def advance(self, row: ScopeRow, events: Sequence[Event]) -> None:
        """Keep a cached archive in step with a write that ends at ``row.seq``, as the Hot
        tier keeps its working set (:meth:`FreshSets.follow`). Nothing is held when the
        Cold ROM searches archives itself (``cold.vector_search``)."""
        if events and not self.cold.vector_search:
            self._sets.follow(
                row,
                events[0].seq,
                lambda archive: self._apply(archive, row, events),
                lambda: self._empty(row),
            )

    def _caught_up(self, row: ScopeRow, archive: WorkingSet) -> WorkingSet:
        with self.cold.read() as session:
            events = session.events.since(row.scope, archive.seq)
        self._apply(archive, row, events)
        return archive

    def _load(self, row: ScopeRow) -> WorkingSet:
        archive = self._empty(row)
        with self.cold.read() as session:
            records, vectors = session.facts.decayed(row.scope)
        archive.apply((Update(r, vectors[i]) for i, r in enumerate(records)), (), row.seq)
        self.loads += 1  # counted once built, as the working sets' loads are
        return archive

    def _apply(self, archive: WorkingSet, row: ScopeRow, events: Iterable[Event]) -> None:
        latest: dict[str, MemoryRecord | None] = {}
        for event in events:
            for record_id in event.closed:  # closed by id: its state is its Cold row
                latest[record_id] = None
            for record in event.upserts:
                latest[record.id] = record
        unread = [rid for rid, r in latest.items() if r is None]
        if unread:
            with self.cold.read() as session:
                latest.update(session.facts.current(row.scope, unread))
        entering = {rid: r for rid, r in latest.items() if r is not None and is_decayed(r)}
        leaving = [
            rid
            for rid, r in latest.items()
            if (r is None or not is_decayed(r)) and rid in archive.records
        ]
        needed = [(rid, r.version) for rid, r in entering.items() if archive.needs_vector(r)]
        with self.cold.read() as session:
            vectors = session.facts.vectors(row.scope, needed) if needed else {}
        updates = [
            Update(r, vectors.get((rid, r.version)) if archive.needs_vector(r) else None)
            for rid, r in entering.items()
        ]
        archive.apply(updates, leaving, row.seq)

    def _empty(self, row: ScopeRow) -> WorkingSet:
        return WorkingSet(row.scope, row.pk, self.dim, self.int8_scan_min_rows)

    def drop(self, scope: AnyScope) -> None:
        """Forget cached archives of a scope or agent (after a purge)."""
        if isinstance(scope, Scope):
            self.cache.drop([scope])
        else:
            self.cache.drop_agent(scope.agent_id)

"""Keeping the Hot tier (LanceDB table + RAM working sets) in step with the Cold log.

The Cold ROM commits first; only then is Hot written. Hot therefore may lag the log (a
crash between the two writes, an S3 hiccup) but is never ahead of it, and every path that
touches Hot reduces to one operation: *apply the log after the watermark*.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from nmafc.core.events import Event, net_changes
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import AnyScope, Scope
from nmafc.engine.fresh_sets import FreshSets
from nmafc.errors import StoreUnavailable
from nmafc.index.half import HALF
from nmafc.index.working_set import Update, WorkingSet, WorkingSetCache
from nmafc.storage.cold import ColdStore, ScopeRow
from nmafc.storage.erasure import Erasure
from nmafc.storage.hot.compaction import CompactionDeferred
from nmafc.storage.hot.lance import HotSnapshot, HotStore
from nmafc.storage.hot.rows import Vector, Watermark

log = logging.getLogger(__name__)


class HotTier:
    """The Hot store plus its RAM cache, driven by events from the Cold ROM."""

    def __init__(
        self,
        store: HotStore,
        cold: ColdStore,
        cache: WorkingSetCache,
        max_lag: int = 200,
        int8_scan_min_rows: int = 0,
    ) -> None:
        self.store = store
        self.cold = cold
        self.cache = cache
        self.max_lag = max_lag
        self.int8_scan_min_rows = int8_scan_min_rows
        self._known: dict[Scope, Watermark] = {}
        self._lagging: dict[Scope, int] = {}
        # Scopes to check against the log once caught up (a Hot write of theirs failed, or
        # ended after its deadline), with how often they were marked: a check in progress
        # must not clear a mark made while it ran.
        self._suspect: dict[Scope, int] = {}
        self._known_lock = threading.Lock()
        self._sets = FreshSets(cache)
        self.loads = 0  # working sets built from storage (a statistic, for tests and metrics)

    # -- the write path ---------------------------------------------------------------

    def commit(
        self,
        row: ScopeRow,
        events: Sequence[Event],
        vectors: dict[tuple[str, int], Vector],
        *,
        defer: bool = False,
    ) -> None:
        """Apply freshly committed ``events`` (which end at ``row.seq``) to Hot and the cache.

        Called with the scope's lock held. A Hot failure is logged and left for the next
        write or start-up to repair: the Cold commit already made the change durable.
        With ``defer`` (reinforcement after a recall) only the RAM working set is updated
        when it is cached; the LanceDB write is folded into the scope's next write or
        :meth:`flush`, so a read-heavy workload does not commit a LanceDB version per read.
        """
        if not events:
            return
        if defer and self._defer(row, events):
            return
        first_seq = events[0].seq
        known = self._watermark(row.scope)
        try:
            if known is None or known.scope_pk != row.pk or known.seq != first_seq - 1:
                self.catch_up(row)
            else:
                self._write(row, events, vectors)
            self._verify_if_suspect(row)
        except Exception as exc:  # the log is durable; Hot catches up from it later
            self._behind(row.scope, exc)
        else:
            with self._known_lock:
                if row.scope not in self._suspect:  # marked again meanwhile: flusher's turn
                    self._lagging.pop(row.scope, None)
        self._advance_cache(row, events, vectors)

    def _behind(self, scope: Scope, exc: Exception) -> None:
        """A Hot write failed: forget the watermark and leave the scope to the flusher."""
        if isinstance(exc, StoreUnavailable):
            log.warning("Hot write for %s deferred: %s", scope, exc.detail)
            self._recheck_when_done(scope, exc)
        else:
            log.error("Hot write for %s failed; it will be replayed from the log", scope,
                      exc_info=exc)  # fmt: skip
        self._mark_suspect(scope)

    def _recheck_when_done(self, reach: AnyScope, exc: StoreUnavailable) -> None:
        """A call that missed its deadline may still commit: check its scopes again then."""
        if exc.running is None:
            return

        def ended(_: object) -> None:
            log.info("a Hot call for %s ended after its deadline; checking it again", reach)
            self._mark_suspect(reach)

        exc.running.add_done_callback(ended)

    def _mark_suspect(self, reach: AnyScope) -> None:
        """Forget the watermarks in reach and leave those scopes to the flusher to check.

        A scope of the reach that Hot knows nothing about needs nothing: its next write
        reads its watermark from the store and replays (or rebuilds) from there.
        """
        within = _within(reach)
        with self._known_lock:
            scopes = {s for s in (*self._known, *self._lagging) if within(s)}
            if isinstance(reach, Scope):
                scopes.add(reach)
            for scope in scopes:
                self._known.pop(scope, None)
                self._lagging[scope] = max(self._lagging.get(scope, 0), 1)
                self._suspect[scope] = self._suspect.get(scope, 0) + 1

    def _defer(self, row: ScopeRow, events: Sequence[Event]) -> bool:
        cached = self.cache.get(row.scope)
        if cached is None or cached.scope_pk != row.pk or cached.seq != events[0].seq - 1:
            return False
        with self._known_lock:
            lag = self._lagging.get(row.scope, 0) + len(events)
            if lag > self.max_lag:
                return False
            self._lagging[row.scope] = lag
        self._advance_cache(row, events, {})
        return True

    def lagging(self) -> list[Scope]:
        """Scopes whose LanceDB rows are behind the log because of deferred writes."""
        with self._known_lock:
            return list(self._lagging)

    def flush(self, row: ScopeRow) -> None:
        """Write a scope's deferred changes to LanceDB (call with the scope lock held)."""
        with self._known_lock:
            if self._lagging.pop(row.scope, None) is None:
                return
        try:
            self.catch_up(row)
            self._verify_if_suspect(row)
        except Exception as exc:
            self._behind(row.scope, exc)
            raise

    def _verify_if_suspect(self, row: ScopeRow) -> None:
        """After a failure, check the caught-up rows against the log; rebuild if they differ.

        The watermark alone cannot tell: a write that failed part-way, or one that landed
        after a newer one, leaves rows it does not account for.
        """
        with self._known_lock:
            marks = self._suspect.get(row.scope)
        if marks is None:
            return
        with self.cold.read() as session:
            expected = session.facts.valid_versions(row.scope)
        held = self.store.versions(row.scope)
        if held != expected:
            log.warning(
                "Hot held %d live rows of %s (%d differing from the log's %d valid records); "
                "rebuilding it",
                len(held), row.scope, len(held.items() ^ expected.items()), len(expected),
            )  # fmt: skip
            self.rebuild(row)
        with self._known_lock:
            if self._suspect.get(row.scope) == marks:
                del self._suspect[row.scope]

    def _write(
        self, row: ScopeRow, events: Sequence[Event], vectors: dict[tuple[str, int], Vector]
    ) -> None:
        changes = net_changes(events)
        rows = self._with_vectors(row, changes.upserts, vectors)
        mark = Watermark(row.pk, row.seq)
        self.store.write(row.scope, mark, rows, changes.removed)
        self._remember(row.scope, mark)

    def _with_vectors(
        self,
        row: ScopeRow,
        records: dict[str, MemoryRecord],
        known: dict[tuple[str, int], Vector] | None = None,
    ) -> list[tuple[MemoryRecord, Vector]]:
        """Each record with its vector: given, from the RAM set, or from the Cold ROM."""
        found: dict[str, Vector] = {}
        missing: list[tuple[str, int]] = []
        cached = self.cache.get(row.scope)
        usable = cached if cached is not None and cached.scope_pk == row.pk else None
        for rid, record in records.items():
            vector = (known or {}).get((rid, record.version))
            if vector is None and usable is not None and not usable.needs_vector(record):
                vector = usable.vector(rid)
            if vector is None:
                missing.append((rid, record.version))
            else:
                found[rid] = vector
        if missing:
            with self.cold.read() as session:
                for (rid, _), vector in session.facts.vectors(row.scope, missing).items():
                    found[rid] = vector
        absent = [rid for rid in records if rid not in found]
        if absent:
            raise LookupError(f"no stored vector for records {absent[:5]} in {row.scope}")
        return [(records[rid], found[rid]) for rid in records]

    # -- catching up ------------------------------------------------------------------

    def catch_up(self, row: ScopeRow) -> None:
        """Bring the scope's Hot rows to ``row.seq`` by replaying the log after the watermark."""
        mark = self.store.watermarks(row.scope).get(row.scope)
        if mark is not None and mark.scope_pk == row.pk and mark.seq >= row.seq:
            self._remember(row.scope, mark)
            return
        if mark is None or mark.scope_pk != row.pk:
            self.rebuild(row)
            return
        with self.cold.read() as session:
            events = session.events.since(row.scope, mark.seq)
        events = [e for e in events if e.seq <= row.seq]
        changes = net_changes(events)
        rows = self._with_vectors(row, changes.upserts)
        target = Watermark(row.pk, row.seq)
        self.store.write(row.scope, target, rows, changes.removed)
        self._remember(row.scope, target)

    def rebuild(self, row: ScopeRow) -> None:
        """Replace the scope's Hot rows with the valid records of the Cold ROM."""
        with self.cold.read() as session:
            records = {r.id: r for r in session.facts.valid(row.scope)}
        rows = self._with_vectors(row, records)
        target = Watermark(row.pk, row.seq)
        self.store.replace_scope(row.scope, target, rows)
        self._remember(row.scope, target)
        self.cache.drop([row.scope])

    def recover(self) -> list[Scope]:
        """At start-up: replay every scope whose Hot watermark lags the log."""
        with self.cold.read() as session:
            rows = session.scopes.list_all_for_recovery()
        marks = self.store.watermarks()
        repaired: list[Scope] = []
        for row in rows:
            mark = marks.get(row.scope)
            if mark is not None and mark.scope_pk == row.pk and mark.seq >= row.seq:
                self._remember(row.scope, mark)
                continue
            self.catch_up(row)
            repaired.append(row.scope)
        return repaired

    # -- the read path ----------------------------------------------------------------

    def working_set(self, row: ScopeRow, *, keep: bool = True) -> WorkingSet:
        """The scope's working set in RAM, at least as fresh as ``row``.

        Without ``keep`` a scope RAM lacks is read for this use only and not cached: a
        maintenance pass over a scope nobody searches must not evict those that are.
        """
        return self._sets.get(row, lambda cached: self._caught_up(row, cached), keep=keep)

    def cached(self, row: ScopeRow) -> WorkingSet | None:
        """The scope's working set if RAM holds it as fresh as ``row`` (nothing is loaded)."""
        return self._sets.peek(row)

    def held(self, row: ScopeRow) -> bool:
        """True if RAM holds a working set of this incarnation, however stale (catching it
        up reads only the log after it, not the whole scope)."""
        return self._sets.held(row)

    def _caught_up(self, row: ScopeRow, working: WorkingSet | None) -> WorkingSet:
        """``working``, or the scope loaded afresh if None, brought to ``row.seq``."""
        if working is None:
            working = self._load(row)
            self.loads += 1  # counted once built: a background load in progress is not one
        if working.seq < row.seq:
            with self.cold.read() as session:
                events = session.events.since(row.scope, working.seq)
            self._apply_to(working, row, events, {})
        return working

    def _load(self, row: ScopeRow) -> WorkingSet:
        try:
            snapshot: HotSnapshot | None = self.store.load(row.scope, HALF)
        except StoreUnavailable:  # Hot is a cache of the log: serve reads from the Cold ROM
            log.warning("Hot store unreadable for %s; loading it from the Cold ROM", row.scope)
            snapshot = None
        working = self._empty(row)
        mark = snapshot.watermark if snapshot is not None else None
        if snapshot is None or mark is None or mark.scope_pk != row.pk or mark.seq > row.seq:
            # Hot holds nothing usable for this incarnation: start from the Cold ROM.
            with self.cold.read() as session:
                records = {r.id: r for r in session.facts.valid(row.scope)}
            pairs = self._with_vectors(row, records) if records else []
            working.apply((Update(r, v) for r, v in pairs), (), row.seq)
            return working
        working.load(snapshot.columns, snapshot.vectors, mark.seq)
        return working

    def _advance_cache(
        self, row: ScopeRow, events: Sequence[Event], vectors: dict[tuple[str, int], Vector]
    ) -> None:
        self._sets.follow(
            row,
            events[0].seq,
            lambda working: self._apply_to(working, row, events, vectors),
            lambda: self._empty(row),
        )

    def _empty(self, row: ScopeRow) -> WorkingSet:
        return WorkingSet(row.scope, row.pk, self.store.dim, self.int8_scan_min_rows)

    def _apply_to(
        self,
        working: WorkingSet,
        row: ScopeRow,
        events: Iterable[Event],
        vectors: dict[tuple[str, int], Vector],
    ) -> None:
        changes = net_changes(events)
        needed = {
            (rid, r.version)
            for rid, r in changes.upserts.items()
            if working.needs_vector(r) and (rid, r.version) not in vectors
        }
        if needed:
            with self.cold.read() as session:
                vectors = {**vectors, **session.facts.vectors(row.scope, needed)}
        updates = [
            Update(r, vectors.get((rid, r.version)) if working.needs_vector(r) else None)
            for rid, r in changes.upserts.items()
        ]
        working.apply(updates, changes.removed, row.seq)

    # -- purge ------------------------------------------------------------------------

    def purge(self, scope: AnyScope) -> int:
        """Delete the scope's (or agent's) rows from Hot and the cache."""
        try:
            deleted = self.store.purge(scope)
        except StoreUnavailable as exc:
            self._recheck_when_done(scope, exc)
            raise
        if isinstance(scope, Scope):
            self.cache.drop([scope])
        else:
            self.cache.drop_agent(scope.agent_id)
        self.drop(scope)
        return deleted

    def erase_deleted(self) -> Erasure:
        """After a purge's delete: rewrite the fragments and drop the versions holding it."""
        try:
            return self.store.erase_deleted()
        except (StoreUnavailable, CompactionDeferred) as exc:
            why = exc.detail if isinstance(exc, StoreUnavailable) else str(exc)
            log.warning("Hot erasure deferred: %s", why)
            return Erasure(
                (), False, note=f"Deferred ({why}); the rows are deleted and their files "
                "are rewritten by the next compaction (or `nmafc erase`).",
            )  # fmt: skip

    def drop(self, reach: AnyScope) -> None:
        """Forget what is known of scopes that no longer exist in the Cold ROM."""
        within = _within(reach)
        with self._known_lock:
            tables: tuple[dict[Scope, Any], ...] = (self._known, self._lagging, self._suspect)
            for table in tables:
                for gone in [s for s in table if within(s)]:
                    del table[gone]

    # -- bookkeeping ------------------------------------------------------------------

    def _watermark(self, scope: Scope) -> Watermark | None:
        with self._known_lock:
            return self._known.get(scope)

    def _remember(self, scope: Scope, mark: Watermark) -> None:
        with self._known_lock:
            self._known[scope] = mark


def _within(reach: AnyScope) -> Callable[[Scope], bool]:
    if isinstance(reach, Scope):
        return lambda scope: scope == reach
    return lambda scope: scope.agent_id == reach.agent_id

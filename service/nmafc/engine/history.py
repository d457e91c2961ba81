"""Time travel and erasure: rollback by replay, per-record history, purge with a tombstone."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from nmafc.core.events import Event, EventKind, diff, fold
from nmafc.core.lifecycle import InvalidReason, invalidate, is_decayed
from nmafc.core.records import MemoryRecord, utcnow
from nmafc.core.scope import AnyScope, Scope
from nmafc.engine.changes import ChangeSet
from nmafc.engine.context import EngineContext
from nmafc.errors import InvalidInput, MemoryNotFound, StoreUnavailable
from nmafc.storage.cold import ColdSession, ScopeRow
from nmafc.storage.erasure import Erasure


@dataclass(frozen=True, slots=True)
class RollbackResult:
    to_turn: float
    restored: int
    removed: int
    turns_retracted: int
    event_id: int | None


@dataclass(frozen=True, slots=True)
class RecordHistory:
    """Every version of a record and every event that named it."""

    record_id: str
    versions: list[MemoryRecord]
    events: list[Event]


@dataclass(frozen=True, slots=True)
class PurgeReceipt:
    """What a purge deleted, per store, and how each store erased it physically
    (``erased["cold"]``, ``erased["hot"]``). The tombstone event keeps no content."""

    scope: str
    cold: dict[str, int] = field(default_factory=dict)
    hot_rows: int = 0
    tombstone_event_id: int | None = None
    erased: dict[str, Erasure] = field(default_factory=dict)


class History:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def rollback(self, scope: Scope, to_turn: float) -> RollbackResult:
        """Return the working set to its state at ``to_turn`` by replaying the log.

        Nothing is rewritten: records created since are invalidated (``rolled_back``),
        records since closed are restored as new versions, turns after ``to_turn`` are
        hidden from search, and a ``rollback`` event records the whole difference. The
        scope's clock keeps running: rollback undoes changes, not time.
        """
        if to_turn < 0:
            raise InvalidInput("`to_turn` must be ≥ 0.", fix="Use a turn from the scope's past.")

        def build(session: ColdSession, row: ScopeRow) -> tuple[ChangeSet, RollbackResult]:
            changes = ChangeSet()
            if to_turn >= row.turn:
                return changes, RollbackResult(to_turn, 0, 0, 0, None)
            target = fold(session.events.through_turn(scope, to_turn))
            current = {r.id: r for r in session.facts.valid(scope)}
            delta = diff(current, target)
            now = utcnow()
            snapshots: list[MemoryRecord] = []
            for rid in sorted(delta.removed):
                closed = invalidate(current[rid], row.turn, now, InvalidReason.ROLLED_BACK)
                changes.update(closed)
                snapshots.append(closed)
            latest = session.facts.current(scope, delta.upserts)
            versions = session.facts.vectors(
                scope, [(rid, r.version) for rid, r in delta.upserts.items()]
            )
            for rid, wanted in delta.upserts.items():
                existing = latest[rid]
                if existing.is_valid and existing.version == wanted.version:
                    changes.update(wanted)
                    snapshots.append(wanted)
                    continue
                if existing.is_valid:
                    changes.update(invalidate(existing, row.turn, now, InvalidReason.SUPERSEDED))
                restored = wanted.evolve(version=existing.version + 1)
                changes.add_version(restored, versions[(rid, wanted.version)])
                snapshots.append(restored)
            retracted = session.turns.retract_after(scope, to_turn)
            # Turns hidden by a forget after ``to_turn`` come back with their facts.
            forgotten = session.events.after_turn(scope, to_turn, [EventKind.DELETE.value])
            session.turns.retract_ids(
                scope,
                [t for e in forgotten for t in e.detail.get("hidden_turn_ids", ())],
                retracted=False,
            )
            session.turns.retract_after(scope, to_turn)
            changes.log(
                EventKind.ROLLBACK,
                row.turn,
                *snapshots,
                record_id=None,
                detail={
                    "to_turn": to_turn,
                    "restored": len(delta.upserts),
                    "removed": len(delta.removed),
                    "turns_retracted": retracted,
                },
            )
            result = RollbackResult(
                to_turn, len(delta.upserts), len(delta.removed), retracted, None
            )
            return changes, result

        result, stored = self.ctx.write_logged(scope, build)
        return replace(result, event_id=stored[-1].id if stored else None)

    def record(self, scope: AnyScope, record_id: str) -> RecordHistory:
        with self.ctx.cold.read() as session:
            versions = session.facts.versions(scope, record_id)
            if not versions:
                raise MemoryNotFound(f"No memory {record_id!r} in {scope}.")
            events = session.events.for_record(scope, record_id)
            # A prune names the records it closes in its payload (one event for many).
            pruned = [v for v in versions if is_decayed(v) and v.invalid_at_time is not None]
            logged = sum(1 for e in events if e.kind is EventKind.PRUNE)
            if len(pruned) > logged:
                since = min(v.invalid_at_time for v in pruned if v.invalid_at_time is not None)
                events += session.events.closing(scope, record_id, since, len(pruned) - logged)
        events.sort(key=lambda e: e.id)
        return RecordHistory(record_id, versions, events)

    def purge(self, scope: AnyScope) -> PurgeReceipt:
        """Erase a scope or a whole agent from both stores; leave a content-free tombstone.

        The rows are deleted in one Cold transaction and one Hot commit, then erased
        physically (:meth:`_erase`): the receipt says how, store by store.
        """
        if isinstance(scope, Scope):
            return replace(self._purge_scope(scope, tombstone=True), erased=self._erase())
        with self.ctx.cold.read() as session:
            rows = session.scopes.of(scope)
        totals: dict[str, int] = {}
        hot_rows = 0
        for row in rows:
            receipt = self._purge_scope(row.scope, tombstone=False)
            for key, value in receipt.cold.items():
                totals[key] = totals.get(key, 0) + value
            hot_rows += receipt.hot_rows
        with self.ctx.cold.write() as session:
            # Anything written to a conversation that appeared mid-purge goes too.
            for key, value in _delete_all(session, scope).items():
                totals[key] = totals.get(key, 0) + value
            tombstone = session.events.append_tombstone(scope, {"deleted": dict(totals)})
            stored = session.events.by_ids(scope, [tombstone])
        hot_rows += self.ctx.hot.purge(scope)
        self.ctx.archive.drop(scope)
        for event in stored:
            self.ctx.publish(Scope(scope.agent_id, "_agent"), [event])
        return PurgeReceipt(str(scope), totals, hot_rows, tombstone, self._erase())

    def _erase(self) -> dict[str, Erasure]:
        """Overwrite what the purge freed: Cold pages and indexes, Hot fragments and versions.

        It runs after the commits, outside the scope lock: the rows are already gone for
        every reader, and other scopes' writes need not wait for a rewrite of shared files.
        """
        try:
            cold = self.ctx.cold.erase_freed()
        except StoreUnavailable as exc:  # committed already: the receipt says what is left
            cold = Erasure((), False, note=f"{exc.detail} Run `nmafc erase` once it answers.")
        return {"cold": cold, "hot": self.ctx.hot.erase_deleted()}

    def _purge_scope(self, scope: Scope, *, tombstone: bool) -> PurgeReceipt:
        with self.ctx.locks.hold(scope):
            with self.ctx.cold.write() as session:
                counts = _delete_all(session, scope)
                event_id = (
                    session.events.append_tombstone(scope, {"deleted": dict(counts)})
                    if tombstone
                    else None
                )
                stored = session.events.by_ids(scope, [event_id] if event_id else [])
            hot_rows = self.ctx.hot.purge(scope)
            self.ctx.archive.drop(scope)
        self.ctx.publish(scope, stored)
        return PurgeReceipt(str(scope), counts, hot_rows, event_id)


def _delete_all(session: ColdSession, scope: AnyScope) -> dict[str, int]:
    return {
        "turns": session.turns.delete(scope),
        "facts": session.facts.delete(scope),
        "events": session.events.delete(scope),
        "scopes": session.scopes.delete(scope),
        "pending_exchanges": session.pending.delete(scope),
    }

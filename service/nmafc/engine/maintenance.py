"""The per-scope maintenance pass: prune what decayed, then consolidate ("REM").

Each step is an indexed query or an incremental look at what changed since the last pass
(records added, entities that lost their records), so a pass costs what the scope did
since then, not the size of the scope.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from nmafc.core.consolidation import plan_merges, plan_relinks
from nmafc.core.events import Event, EventKind
from nmafc.core.lifecycle import plan_promotions, plan_prune
from nmafc.core.records import MemoryRecord, utcnow
from nmafc.core.scope import Scope
from nmafc.engine.changes import ChangeSet
from nmafc.engine.context import EngineContext
from nmafc.storage.cold import ColdSession, ScopeRow

# Record ids per prune event: a pass that expires 10^5 records logs 100 events naming
# them, each small enough for a live stream or a history page to carry.
CLOSED_PER_EVENT = 1000


@dataclass(frozen=True, slots=True)
class MaintenanceReport:
    scope: Scope
    turn: float
    expired: int = 0
    archived: int = 0
    promoted: int = 0
    merged: int = 0
    relinked: int = 0
    seconds: float = 0.0
    detail: dict[str, int] = field(default_factory=dict)


class Maintenance:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def due(self, scope: Scope) -> bool:
        """True once ``consolidation.every_turns`` turns have passed since the last pass."""
        row = self.ctx.row(scope)
        if row is None:
            return False
        return row.turn - row.maintained_turn >= self.ctx.settings.consolidation.every_turns

    def due_scopes(self, limit: int) -> list[Scope]:
        """Scopes that are due, least recently written first, at most ``limit``: one indexed
        query, whatever the number of agents and scopes."""
        with self.ctx.cold.read() as session:
            return session.scopes.due(self.ctx.settings.consolidation.every_turns, limit)

    def run(self, scope: Scope) -> MaintenanceReport:
        """Prune, promote, merge near-duplicates and drop dead links, in one batched write."""
        started = time.perf_counter()
        settings = self.ctx.settings.consolidation

        def build(session: ColdSession, row: ScopeRow) -> tuple[ChangeSet, MaintenanceReport]:
            changes = ChangeSet()
            now = self.ctx.clock(row.turn)
            at = utcnow()
            working = self.ctx.hot.working_set(row, keep=False)
            gone: dict[str, str] = {}  # record id: entity, of records this pass closes

            # Set-based: a prune may close 10^5 records. Their rows are closed in place and
            # the log names them by id (their last state is their closed version row).
            prune = plan_prune(session.facts.expiring(row.scope, now), now, at)
            for closings in (prune.expired, prune.archived):
                changes.close_all(closings)
                for start in range(0, len(closings), CLOSED_PER_EVENT):
                    chunk = closings[start : start + CLOSED_PER_EVENT]
                    changes.log(
                        EventKind.PRUNE,
                        row.turn,
                        closed=tuple(c.id for c in chunk),
                        detail={"reason": chunk[0].invalid_reason},
                    )
                gone.update((c.id, c.entity) for c in closings)

            promoted = [
                r
                for r in plan_promotions(
                    session.facts.promotable(row.scope, settings.promote_k),
                    settings.promote_k,
                    self.ctx.decay,
                )
                if r.id not in gone
            ]
            for record in promoted:
                changes.update(record)
                changes.log(EventKind.ELEVATE, row.turn, record)

            log = _digest(
                session.events.stream_since(row.scope, row.maintained_seq),
                lambda rid: rid in working.records and rid not in gone,
                settings.merge_window,
            )
            added, unchecked = list(log.added), log.unchecked
            # This pass's changes over the working set, without copying the working set.
            changed: dict[str, MemoryRecord] = {r.id: r for r in promoted}

            def state(rid: str) -> MemoryRecord | None:
                if rid in gone:
                    return None
                return changed.get(rid) or working.records.get(rid)

            pairs = [
                p for p in working.pairs_above(added, settings.merge_threshold) if p[1] not in gone
            ]
            involved = {rid: r for p in pairs for rid in p[:2] if (r := state(rid)) is not None}
            merges = plan_merges(pairs, involved, settings.merge_threshold, now, at, self.ctx.decay)
            for merge in merges:
                changes.update(merge.survivor, merge.absorbed)
                changes.log(
                    EventKind.MERGE,
                    row.turn,
                    merge.survivor,
                    merge.absorbed,
                    record_id=merge.survivor.id,
                    detail={"absorbed": merge.absorbed.id},
                )
                changed[merge.survivor.id] = merge.survivor
                gone[merge.absorbed.id] = merge.absorbed.entity

            # (Events closing by id are this pass's prunes only, whose entities are in gone.)
            left = log.left | set(gone.values())
            dead = {
                entity
                for entity in left
                if not any(state(rid) for rid in working.by_entity.get(entity, ()))
            }
            linking = {rid for entity in dead for rid in working.linked_from.get(entity, ())}
            relinked = plan_relinks((r for rid in linking if (r := state(rid)) is not None), dead)
            for record in relinked:
                changes.update(record)
                changes.log(EventKind.RELINK, row.turn, record, detail={"dropped": sorted(dead)})

            session.scopes.mark_maintained(row, seq=row.seq + len(changes.events), turn=row.turn)
            report = MaintenanceReport(
                scope=row.scope,
                turn=row.turn,
                expired=len(prune.expired),
                archived=len(prune.archived),
                promoted=len(promoted),
                merged=len(merges),
                relinked=len(relinked),
                detail={"merge_candidates": len(added), "merge_unchecked": unchecked},
            )
            return changes, report

        report = self.ctx.write(scope, build)
        return replace(report, seconds=time.perf_counter() - started)


@dataclass(slots=True)
class _LogDigest:
    """What a pass needs of the log since the last one, without holding the log."""

    added: deque[str]  # the newest facts added since, at most the merge window
    unchecked: int = 0  # facts added since that fell out of the window
    left: set[str] = field(default_factory=set)  # entities of facts closed since


def _digest(events: Iterable[Event], mergeable: Callable[[str], bool], window: int) -> _LogDigest:
    log = _LogDigest(deque(maxlen=window))
    for event in events:
        for record in event.upserts:
            if not record.is_valid:
                log.left.add(record.entity)
            if event.kind is EventKind.ADD and mergeable(record.id):
                if len(log.added) == window:
                    log.unchecked += 1
                log.added.append(record.id)
    return log

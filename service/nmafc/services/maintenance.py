"""The declared services: per-scope maintenance, Hot compaction, deferred-write flushes."""

from __future__ import annotations

import logging
import time

from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.maintenance import MaintenanceReport
from nmafc.services.base import Service
from nmafc.services.remember_queue import RememberQueueService
from nmafc.settings import Settings
from nmafc.storage.hot.compaction import CompactionDeferred

log = logging.getLogger(__name__)


class MaintenanceService(Service):
    """Prune + consolidation for every scope that is due, one replica per scope at a time.

    For each due scope it takes the scope's lease (a PostgreSQL advisory lock keyed by a
    hash of agent and conversation), checks again under the lease that the scope is still
    due — another replica may have just maintained it — and only then runs the pass.
    """

    name = "maintenance"

    def __init__(self, engine: MemoryEngine, *, enabled: bool, interval_s: float, limit: int):
        super().__init__(enabled=enabled, interval_s=interval_s)
        self.engine = engine
        self.limit = limit
        self.reports: list[MaintenanceReport] = []  # recent passes, for tests and logs

    def run_once(self) -> int:
        done = 0
        for scope in self.engine.due_scopes(self.limit):
            if self.maintain(scope) is not None:
                done += 1
        return done

    def maintain(self, scope: Scope) -> MaintenanceReport | None:
        """One scope's pass if this replica gets its lease and it is still due."""
        with self.engine.lease(f"maintain\x1f{scope.agent_id}\x1f{scope.conversation_id}") as held:
            if not held or not self.engine.maintenance_due(scope):
                return None
            report = self.engine.maintain(scope)
        self.reports = [*self.reports[-999:], report]
        log.info(
            "maintained a scope in %.3fs: %d expired, %d archived, %d promoted, %d merged",
            report.seconds,
            report.expired,
            report.archived,
            report.promoted,
            report.merged,
        )
        return report


class CompactionService(Service):
    """Merge LanceDB fragments, drop removed rows, prune old versions, refresh statistics.

    It checks every ``interval_s`` and compacts when the table is due (fragment or commit
    count, see :meth:`MemoryEngine.compaction_due`) or ``longest_s`` passed since the last
    compaction, so fragment and version counts stay bounded under any write rate. One
    replica at a time compacts, under the ``compaction`` lease.
    """

    name = "compaction"

    def __init__(
        self, engine: MemoryEngine, *, enabled: bool, interval_s: float, longest_s: float
    ) -> None:
        super().__init__(enabled=enabled, interval_s=interval_s)
        self.engine = engine
        self.longest_s = longest_s
        self._last = time.monotonic()

    def run_once(self) -> int:
        timer = time.monotonic() - self._last >= self.longest_s
        if not timer and not self.engine.compaction_due():
            return 0
        with self.engine.lease("compaction") as held:
            if not held:
                return 0
            try:
                # ANALYZE takes the SQLite write lock: on the timer only, not every few
                # seconds of a write burst.
                counts = self.engine.compact(planner_stats=timer)
            except CompactionDeferred as exc:  # busy writes: the next check tries again
                log.warning("Hot compaction deferred: %s", exc)
                return 0
        if timer:
            self._last = time.monotonic()
        return counts.get("fragments_rewritten", 0) + counts.get("gone_rows_deleted", 0)


class FlushService(Service):
    """Write deferred Hot changes (reinforcements ride along with later writes) now."""

    name = "flush"

    def __init__(self, engine: MemoryEngine, *, enabled: bool, interval_s: float) -> None:
        super().__init__(enabled=enabled, interval_s=interval_s)
        self.engine = engine

    def run_once(self) -> int:
        return self.engine.flush()


def declared_services(engine: MemoryEngine, settings: Settings) -> list[Service]:
    """Every background service, configured from ``settings.maintenance`` and ``.chat``."""
    m = settings.maintenance
    return [
        MaintenanceService(
            engine, enabled=m.pass_enabled, interval_s=m.pass_interval_s, limit=m.scopes_per_run
        ),
        CompactionService(
            engine,
            enabled=m.compaction_enabled,
            interval_s=m.compaction_check_s,
            longest_s=m.compaction_interval_s,
        ),
        FlushService(engine, enabled=m.flush_enabled, interval_s=m.flush_interval_s),
        RememberQueueService(
            engine,
            enabled=settings.chat.queue_enabled,
            interval_s=settings.chat.queue_interval_s,
            keep_done_s=settings.chat.queue_keep_done_s,
        ),
    ]

"""The remember-queue service: remembers chat exchanges that were queued but not yet
remembered (a crash, a failure, another replica's leftovers), at start-up and every
``chat.queue_interval_s``."""

from __future__ import annotations

import logging

from nmafc.engine.engine import MemoryEngine
from nmafc.services.base import Observer, Service

log = logging.getLogger(__name__)


class RememberQueueService(Service):
    """Drain every conversation with queued exchanges; forget long-remembered ones."""

    name = "remember_queue"

    def __init__(
        self, engine: MemoryEngine, *, enabled: bool, interval_s: float, keep_done_s: float
    ) -> None:
        super().__init__(enabled=enabled, interval_s=interval_s)
        self.engine = engine
        self.keep_done_s = keep_done_s

    def run_once(self) -> int:
        remembered = 0
        for scope in self.engine.queue.scopes_with_work():
            # Claiming happens in the remember transaction, so replicas draining the same
            # conversation at once cannot apply an exchange twice; the lease only saves the
            # duplicate extraction work.
            with self.engine.lease(
                f"remember\x1f{scope.agent_id}\x1f{scope.conversation_id}"
            ) as held:
                if not held:
                    continue
                deliveries = self.engine.queue.drain(scope)
            remembered += sum(1 for d in deliveries if d.remembered)
        if remembered:
            log.info("remembered %d queued chat exchange(s)", remembered)
        self.engine.queue.prune_done(self.keep_done_s)
        return remembered

    async def run_forever(self, observe: Observer | None = None) -> None:
        # Leftovers from before a restart are remembered right away, not after one interval.
        await self._round(observe)
        await super().run_forever(observe)

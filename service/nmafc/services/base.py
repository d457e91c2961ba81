"""The ``Service`` contract and the loop that runs services until cancelled."""

from __future__ import annotations

import abc
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio
import anyio.to_thread

from nmafc.errors import StoreUnavailable

log = logging.getLogger(__name__)
# Longest wait between rounds while a store is out: each round in an outage waits twice
# the last (from ``interval_s``), so a service does not hammer a store that is struggling
# to come back, and still notices within this long once it has.
BACKOFF_CAP_S = 30.0


@dataclass(frozen=True, slots=True)
class ServiceRun:
    """What one ``run_once`` did: its duration, how much work, whether it failed."""

    service: str
    seconds: float
    items: int
    failed: bool = False


Observer = Callable[[ServiceRun], None]


class Service(abc.ABC):
    """A unit of periodic background work. ``run_once`` is synchronous (run in a thread)."""

    name: str = "service"

    def __init__(self, *, enabled: bool, interval_s: float) -> None:
        self.enabled = enabled
        self.interval_s = interval_s
        self.outage_rounds = 0  # consecutive rounds deferred by a store outage

    @abc.abstractmethod
    def run_once(self) -> int:
        """Do one round of work; return how many items (scopes, rows, …) it handled."""

    @property
    def next_delay_s(self) -> float:
        """``interval_s``, or longer after rounds deferred by an outage (see BACKOFF_CAP_S)."""
        if not self.outage_rounds:
            return self.interval_s
        backoff = self.interval_s * 2.0 ** min(self.outage_rounds, 16)
        return max(self.interval_s, min(backoff, BACKOFF_CAP_S))

    async def run_forever(self, observe: Observer | None = None) -> None:
        """Run every ``interval_s`` until cancelled; a failed round is logged, not fatal."""
        while True:
            await anyio.sleep(self.next_delay_s)
            await self._round(observe)

    async def _round(self, observe: Observer | None) -> None:
        """One ``run_once`` in a worker thread, timed and reported; failures are logged."""
        started = time.perf_counter()
        failed, items = False, 0
        try:
            items = await anyio.to_thread.run_sync(self.run_once, abandon_on_cancel=False)
        except StoreUnavailable as exc:  # an outage: a later round retries
            failed = True
            self.outage_rounds += 1
            log.warning(
                "background service %s deferred (next round in %gs): %s",
                self.name, self.next_delay_s, exc.detail,
            )  # fmt: skip
        except Exception:
            failed = True
            self.outage_rounds = 0
            log.exception("background service %s failed", self.name)
        else:
            self.outage_rounds = 0
        run = ServiceRun(self.name, time.perf_counter() - started, items, failed)
        if observe is not None:
            observe(run)


async def run_services(services: Sequence[Service], observe: Observer | None = None) -> None:
    """Run every enabled service concurrently until cancelled."""
    enabled = [s for s in services if s.enabled]
    for service in services:
        log.info(
            "background service %s: %s",
            service.name,
            f"every {service.interval_s:g}s" if service.enabled else "disabled",
        )
    async with anyio.create_task_group() as group:
        for service in enabled:
            group.start_soon(service.run_forever, observe)

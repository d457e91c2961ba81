"""Background work as declared services: each has a name, a switch and an interval.

They run in-process next to the HTTP service (``nmafc serve``) or alone in a worker
process (``nmafc worker``); with PostgreSQL, per-scope leases (advisory locks) make sure N
replicas never maintain one scope at the same time.
"""

from nmafc.services.base import Service, ServiceRun, run_services
from nmafc.services.maintenance import (
    CompactionService,
    FlushService,
    MaintenanceService,
    declared_services,
)
from nmafc.services.remember_queue import RememberQueueService

__all__ = [
    "CompactionService",
    "FlushService",
    "MaintenanceService",
    "RememberQueueService",
    "Service",
    "ServiceRun",
    "declared_services",
    "run_services",
]

"""Bounded work per request: a deadline for each heavy request, a cap per agent on them.

Heavy requests — searches, writes, agent-wide stats — enter :meth:`Admission.heavy`. It
refuses the request with 429 ``agent_busy`` when its agent already has
``NMAFC_SERVER_AGENT_MAX_CONCURRENT`` of them in flight in this process (another agent's
requests are not counted against it), and otherwise opens the request's deadline
(``NMAFC_SERVER_REQUEST_TIMEOUT_S``, see :mod:`nmafc.deadline`) for the work it runs.
The counts live on the event loop's thread, which alone enters and leaves, so no lock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from nmafc import deadline
from nmafc.errors import AgentBusy


class Admission:
    """Per-agent slots for heavy requests, and the deadline each admitted one runs under."""

    def __init__(self, max_per_agent: int, timeout_s: float) -> None:
        self.max_per_agent = max_per_agent
        self.timeout_s = timeout_s
        self._in_flight: Counter[str] = Counter()

    def in_flight(self, agent_id: str) -> int:
        """Heavy requests of ``agent_id`` running now."""
        return self._in_flight[agent_id]

    @contextmanager
    def heavy(self, agent_id: str) -> Iterator[None]:
        """Hold one of the agent's slots and a deadline while the request's work runs."""
        if self._in_flight[agent_id] >= self.max_per_agent:
            raise AgentBusy(
                f"Agent {agent_id!r} already has {self.max_per_agent} searches, writes or "
                "stats requests in flight."
            )
        self._in_flight[agent_id] += 1
        try:
            with deadline.within(self.timeout_s):
                yield
        finally:
            self._in_flight[agent_id] -= 1
            if not self._in_flight[agent_id]:
                del self._in_flight[agent_id]

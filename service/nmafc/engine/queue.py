"""The durable remember queue: exchanges are committed first, remembered exactly once later.

The chat proxy enqueues an exchange (one committed row) before its caller sees the reply
end, then drains the conversation's queue. Draining remembers each exchange and claims its
row in the same Cold transaction, so a crash at any point leaves it either queued — a later
drain (the background service, which also runs at start-up) remembers it — or done.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from nmafc.core.records import utcnow
from nmafc.core.scope import AgentScope, AnyScope, Scope
from nmafc.core.turns import Message, dated, validate_messages
from nmafc.engine.context import EngineContext
from nmafc.engine.writes import WriteResult, Writes
from nmafc.errors import StoreNotWritable, StoreUnavailable
from nmafc.storage.cold.pending_repo import PendingExchange

log = logging.getLogger(__name__)


def message_to_json(message: Message) -> dict[str, Any]:
    """A message as the queue stores it (its time fixed now, not when it is drained)."""
    return {
        "role": message.role,
        "content": message.content,
        "speaker": message.speaker,
        "occurred_at": (message.occurred_at or utcnow()).isoformat(),
        "captions": list(message.captions),
    }


def message_from_json(value: dict[str, Any]) -> Message:
    when = value.get("occurred_at")
    return Message(
        content=str(value.get("content") or ""),
        role=str(value.get("role") or "user"),
        speaker=value.get("speaker"),
        occurred_at=datetime.fromisoformat(when) if isinstance(when, str) else None,
        captions=tuple(str(c) for c in value.get("captions") or ()),
    )


@dataclass(frozen=True, slots=True)
class Delivery:
    """What draining one queued exchange did."""

    item_id: int
    result: WriteResult | None = None
    error: str | None = None

    @property
    def remembered(self) -> bool:
        return self.result is not None


class RememberQueue:
    def __init__(self, ctx: EngineContext, writes: Writes) -> None:
        self.ctx = ctx
        self.writes = writes
        self._guard = threading.Lock()
        self._active: set[Scope] = set()
        self._again: set[Scope] = set()

    @property
    def max_attempts(self) -> int:
        return self.ctx.settings.chat.queue_max_attempts

    def enqueue(self, scope: Scope, messages: Sequence[Message]) -> int:
        """Commit one exchange to the queue; returns its id. Invalid input is refused here."""
        validate_messages(list(messages))
        stamped = dated(messages, utcnow())
        with self.ctx.cold.write() as session:
            return session.pending.enqueue(scope, [message_to_json(m) for m in stamped])

    def pending(self, scope: AnyScope, *, limit: int = 100) -> list[PendingExchange]:
        """Exchanges not yet remembered (including ones that exhausted their attempts)."""
        with self.ctx.cold.read() as session:
            return session.pending.undone(scope, limit=limit)

    def drain(self, scope: Scope) -> list[Delivery]:
        """Remember the conversation's queued exchanges, oldest first.

        Concurrent drains of one conversation in this process coalesce: a drain asked for
        while one runs makes the running one look again instead of racing it.
        """
        with self._guard:
            if scope in self._active:
                self._again.add(scope)
                return []
            self._active.add(scope)
        deliveries: list[Delivery] = []
        try:
            while True:
                deliveries += self._drain_once(scope)
                with self._guard:
                    if scope not in self._again:
                        return deliveries
                    self._again.discard(scope)
        finally:
            with self._guard:
                self._active.discard(scope)
                self._again.discard(scope)

    def scopes_with_work(self, limit: int = 200) -> list[Scope]:
        """Conversations (of every agent) with exchanges still to remember."""
        with self.ctx.cold.read() as session:
            agents = session.pending.agents_with_work()
            found: dict[Scope, None] = {}
            for agent in agents:
                items = session.pending.undone(
                    AgentScope(agent), max_attempts=self.max_attempts, limit=limit
                )
                found.update((item.scope, None) for item in items)
        return list(found)[:limit]

    def prune_done(self, older_than_s: float) -> int:
        """Delete exchanges remembered more than ``older_than_s`` ago."""
        before = utcnow() - timedelta(seconds=older_than_s)
        with self.ctx.cold.write() as session:
            # Done exchanges always belong to a scope that exists (remembering created it).
            return sum(
                session.pending.prune_done(AgentScope(agent), before)
                for agent in session.scopes.agents()
            )

    def _drain_once(self, scope: Scope) -> list[Delivery]:
        with self.ctx.cold.read() as session:
            items = session.pending.undone(scope, max_attempts=self.max_attempts)
        deliveries = []
        for item in items:
            delivery = self._deliver(item)
            deliveries.append(delivery)
            if delivery.error is not None:
                break  # keep the conversation's order: later exchanges wait for this one
        return deliveries

    def _deliver(self, item: PendingExchange) -> Delivery:
        messages = [message_from_json(m) for m in item.messages]
        try:
            result = self.writes.remember_queued(item.scope, item.id, messages)
        except (StoreUnavailable, StoreNotWritable):
            raise  # the store itself is down: not this exchange's fault, nothing to count
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            with self.ctx.cold.write() as session:
                session.pending.record_failure(item.scope, item.id, error)
            level = logging.ERROR if item.attempts + 1 >= self.max_attempts else logging.WARNING
            log.log(
                level,
                "could not remember queued exchange %d (attempt %d of %d): %s",
                item.id,
                item.attempts + 1,
                self.max_attempts,
                error,
                extra={"event": "remember_queue_failure", "queue_id": item.id},
            )
            return Delivery(item.id, error=error)
        return Delivery(item.id, result=result)

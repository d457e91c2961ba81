"""What every engine operation shares: settings, stores, embedder, locks, the clock."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from nmafc import deadline
from nmafc.core.decay import DecayParams
from nmafc.core.events import Event
from nmafc.core.extraction import Extractor
from nmafc.core.scope import Scope
from nmafc.embedding.base import Embedder
from nmafc.engine.archive import Archive
from nmafc.engine.changes import ChangeSet
from nmafc.engine.hot_tier import HotTier
from nmafc.engine.locks import ScopeLocks
from nmafc.engine.recall_batch import RecallBatching
from nmafc.errors import StoreUnavailable
from nmafc.settings import Settings
from nmafc.storage.cold import ColdSession, ColdStore, ScopeRow

T = TypeVar("T")
Build = Callable[[ColdSession, ScopeRow], tuple[ChangeSet, T]]
Listener = Callable[[Scope, list[Event]], None]
log = logging.getLogger(__name__)


@dataclass
class EngineContext:
    settings: Settings
    cold: ColdStore
    hot: HotTier
    archive: Archive
    embedder: Embedder
    extractor: Extractor
    locks: ScopeLocks
    decay: DecayParams
    batching: RecallBatching  # recall's query embedding and scans, shared across recalls
    listeners: list[Listener] = field(default_factory=list)

    def clock(self, turn: float) -> float:
        """The decay clock at scope turn ``turn``: the turn itself, or wall-clock hours."""
        if self.settings.decay.clock == "hours":
            return time.time() / 3600.0
        return turn

    def write(self, scope: Scope, build: Build[T]) -> T:
        """One write: lock the scope, build and commit the change set, then update Hot.

        ``build`` runs inside the Cold transaction with the scope row locked; it must not
        embed or call out (do that before), so the transaction stays short.
        """
        return self.write_logged(scope, build)[0]

    def write_logged(
        self, scope: Scope, build: Build[T], *, defer_hot: bool = False
    ) -> tuple[T, list[Event]]:
        """:meth:`write`, also returning the events as stored (with ids and seqs)."""
        deadline.check("before the write")
        with self.locks.hold(scope):
            with self.cold.write() as session:
                row = session.scopes.lock(scope)
                changes, result = build(session, row)
                if changes:
                    row, stored = changes.apply(session, row)
                else:
                    stored = []
                # The last point a write may stop: raising here rolls the transaction back.
                deadline.check("before the write committed")
            self.hot.commit(row, stored, changes.vectors, defer=defer_hot)
            self._advance_archive(row, stored)
        self.publish(scope, stored)
        return result, stored

    def _advance_archive(self, row: ScopeRow, events: list[Event]) -> None:
        """The cached archive in step with the write; never fails a write (the archive
        is derived: dropped, it is loaded from the Cold ROM on next use)."""
        try:
            self.archive.advance(row, events)
        except Exception:
            log.exception("archive of %s not advanced; it is loaded again on next use", row.scope)
            self.archive.drop(row.scope)

    def publish(self, scope: Scope, events: list[Event]) -> None:
        """Tell listeners (the live-event hub) about committed events; never fails a write."""
        if not events:
            return
        for listener in self.listeners:
            try:
                listener(scope, events)
            except Exception:  # a broken listener must not turn a durable write into an error
                log.exception("event listener failed")

    def flush_hot(self) -> int:
        """Write every scope's deferred Hot changes to LanceDB; returns how many scopes.

        An unreachable store stops the round (the next one retries); any other failure is
        one scope's (logged by the Hot tier) and must not keep the others behind.
        """
        flushed = 0
        for scope in self.hot.lagging():
            with self.locks.hold(scope):
                row = self.row(scope)
                if row is None:  # purged meanwhile
                    self.hot.drop(scope)
                    continue
                try:
                    self.hot.flush(row)
                except StoreUnavailable:
                    raise
                except Exception:  # logged by the Hot tier; retried next round
                    continue
                flushed += 1
        return flushed

    def row(self, scope: Scope) -> ScopeRow | None:
        with self.cold.read() as session:
            return session.scopes.get(scope)

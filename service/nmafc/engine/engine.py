"""The engine: one object per process that owns the stores and runs every operation.

It is thread-safe: writes to one scope are serialised by the scope lock (and by the Cold
ROM's row lock across processes), writes to different scopes run in parallel, reads never
block on writes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from nmafc import deadline
from nmafc.core.decay import decayed_weight
from nmafc.core.events import Event
from nmafc.core.extraction import Extractor, VerbatimExtractor
from nmafc.core.extraction.rule_based import ExtractionConfig, RuleExtractor
from nmafc.core.facts import FactDraft
from nmafc.core.graph import EntityGraph, entity_graph
from nmafc.core.records import MemoryRecord
from nmafc.core.retrieval import RetrievalConfig, preset
from nmafc.core.scope import AnyScope, Scope
from nmafc.core.tiers import parse_tier
from nmafc.core.turns import Message
from nmafc.directory import Conversation, conversations
from nmafc.embedding.base import Embedder
from nmafc.embedding.factory import create_embedder
from nmafc.embedding.tokens import default_counter
from nmafc.engine.archive import Archive
from nmafc.engine.context import EngineContext, Listener
from nmafc.engine.history import History, PurgeReceipt, RecordHistory, RollbackResult
from nmafc.engine.hot_tier import HotTier
from nmafc.engine.locks import ScopeLocks
from nmafc.engine.maintenance import Maintenance, MaintenanceReport
from nmafc.engine.queue import RememberQueue
from nmafc.engine.recall import Recall, RecallOptions, RecallResult
from nmafc.engine.recall_batch import RecallBatching
from nmafc.engine.scope_loads import ScopeLoads
from nmafc.engine.snapshot import Snapshots
from nmafc.engine.writes import WriteResult, Writes
from nmafc.errors import MemoryNotFound, StoreUnavailable
from nmafc.index.working_set import WorkingSetCache
from nmafc.settings import Settings
from nmafc.storage.cold import ColdStore, ScopeRow
from nmafc.storage.erasure import Erasure
from nmafc.storage.hot.ann import AnnPolicy
from nmafc.storage.hot.compaction import CompactionPolicy
from nmafc.storage.hot.lance import HotStore
from nmafc.storage.hot.s3 import storage_options

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RecordPage:
    """One page of records; ``next_after`` is the cursor of the next page (None: last)."""

    records: list[MemoryRecord]
    next_after: int | None


@dataclass(frozen=True, slots=True)
class StoreSizes:
    cold_bytes: int
    hot_rows: int
    cache_bytes: int


@dataclass(frozen=True, slots=True)
class Stats:
    scope: str
    turn: float
    records: dict[str, int]
    invalidated: dict[str, int]
    turns: int
    events: dict[str, int]
    hot_rows: int
    mean_weight: float | None
    weight_histogram: list[int] = field(default_factory=list)


class MemoryEngine:
    """Everything the library API and the HTTP service call."""

    def __init__(
        self,
        settings: Settings,
        cold: ColdStore,
        hot: HotStore,
        embedder: Embedder,
        extractor: Extractor | None = None,
    ) -> None:
        self.settings = settings
        self.embedder = embedder
        cache_bytes = settings.hot.cache_max_mb * 1024 * 1024
        freeze = settings.hot.gc_freeze_every or 0  # None: the host's collector left alone
        self.ctx = EngineContext(
            settings=settings,
            cold=cold,
            hot=HotTier(
                hot,
                cold,
                WorkingSetCache(cache_bytes, freeze_every=freeze),
                settings.hot.max_lag_events,
                settings.hot.int8_scan_min_rows,
            ),
            archive=Archive(
                cold,
                WorkingSetCache(cache_bytes, freeze_every=freeze),
                embedder.dim,
                settings.hot.int8_scan_min_rows,
            ),
            embedder=embedder,
            extractor=extractor or _extractor(settings),
            locks=ScopeLocks(),
            decay=settings.decay.params(),
            batching=RecallBatching(embedder, settings.hot.recall_batch_max),
        )
        # A recall's Cold lists (keyword, turns, dated turns) run here while its query is
        # embedded and scanned: not the server's per-request pool (api.state.RecallThreads).
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="nmafc-cold-lists")
        self._writes = Writes(self.ctx)
        # Working sets too large to load inline are loaded here, off the recall's path.
        self._loads = ScopeLoads(self._warm)
        self._recall = Recall(
            self.ctx, self._pool, default_counter().count, self._writes.reinforce, self._loads
        )
        self._maintenance = Maintenance(self.ctx)
        self._history = History(self.ctx)
        self._snapshots = Snapshots(self.ctx)
        self.queue = RememberQueue(self.ctx, self._writes)

    @classmethod
    def open(
        cls,
        settings: Settings,
        *,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
    ) -> MemoryEngine:
        """Open (and migrate) the stores the settings name, then replay any lagging scope."""
        embedder = embedder or create_embedder(
            settings.embedding, cache_dir=settings.resolved_cache_dir()
        )
        cold = ColdStore.open(
            settings.resolved_cold_uri(),
            sqlite_synchronous=settings.cold.sqlite_synchronous,
            pool_size=settings.cold.pool_size,
            connect_timeout_s=settings.cold.connect_timeout_s,
        )
        try:
            cold.pin_embedding_model(embedder.model_name, embedder.dim)
            if cold.enable_vector_search(settings.cold.vector_search, embedder.dim):
                log.info("archived facts are searched in the Cold ROM (pgvector)")
            hot_settings = settings.hot
            hot = HotStore.open(
                settings.resolved_hot_uri(),
                table=hot_settings.table,
                model=embedder.model_name,
                dim=embedder.dim,
                options=storage_options(
                    endpoint=hot_settings.s3_endpoint,
                    region=hot_settings.s3_region,
                    access_key_id=_secret(hot_settings.s3_access_key_id),
                    secret_access_key=_secret(hot_settings.s3_secret_access_key),
                    allow_http=hot_settings.s3_allow_http,
                    max_retries=hot_settings.s3_max_retries,
                    retry_timeout_s=hot_settings.s3_retry_timeout_s,
                    connect_timeout_s=hot_settings.s3_connect_timeout_s,
                )
                if settings.resolved_hot_uri().startswith("s3://")
                else None,
                policy=CompactionPolicy(
                    target_rows=settings.maintenance.compaction_fragment_rows,
                    retention_s=settings.maintenance.version_retention_s,
                    index_cache_mb=hot_settings.lance_index_cache_mb,
                    metadata_cache_mb=hot_settings.lance_metadata_cache_mb,
                ),
                read_consistency_s=hot_settings.read_consistency_s,
                ann_policy=AnnPolicy(
                    min_rows=hot_settings.ann_min_rows,
                    index_type=hot_settings.ann_index_type,
                    min_share=hot_settings.ann_min_share,
                    nprobes=hot_settings.ann_nprobes,
                    refine_factor=hot_settings.ann_refine_factor,
                ),
            )
            if settings.resolved_hot_uri().startswith("s3://"):
                hot.guard_calls(hot_settings.s3_call_timeout_s, hot_settings.s3_cooldown_s)
        except BaseException:
            cold.close()
            raise
        engine = cls(settings, cold, hot, embedder, extractor)
        repaired = engine.ctx.hot.recover()
        if repaired:
            log.warning("replayed %d scope(s) whose Hot state lagged the log", len(repaired))
        return engine

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener(scope, events)`` after every committed write (and purge)."""
        self.ctx.listeners.append(listener)

    # -- writes -----------------------------------------------------------------------

    def remember(self, scope: Scope, messages: Sequence[Message]) -> WriteResult:
        return self._writes.remember(scope, messages)

    def remember_queued(
        self, scope: Scope, item_id: int, messages: Sequence[Message]
    ) -> WriteResult | None:
        """Remember a queued exchange, claiming it in the same transaction (None: done already)."""
        return self._writes.remember_queued(scope, item_id, messages)

    def ingest(self, scope: Scope, facts: Sequence[FactDraft]) -> WriteResult:
        return self._writes.ingest(scope, facts)

    def update(
        self,
        scope: Scope,
        record_id: str,
        *,
        content: str | None = None,
        tier: str | None = None,
        expected_version: int | None = None,
    ) -> MemoryRecord:
        return self._writes.update(
            scope, record_id, content=content, tier=tier, expected_version=expected_version
        )

    def forget(self, scope: Scope, record_id: str) -> MemoryRecord:
        return self._writes.forget(scope, record_id)

    def reinforce(self, scope: Scope, record_ids: Sequence[str]) -> list[MemoryRecord]:
        return self._writes.reinforce(scope, record_ids)

    # -- reads ------------------------------------------------------------------------

    def recall(
        self,
        scope: AnyScope,
        query: str,
        options: RecallOptions | None = None,
        *,
        preset_name: str | None = None,
        config: RetrievalConfig | None = None,
    ) -> RecallResult:
        name = preset_name or self.settings.retrieval.preset
        options = options or RecallOptions(budget_tokens=self.settings.retrieval.budget_tokens)
        return self._recall.recall(scope, query, options, config or preset(name), name)

    def get(self, scope: AnyScope, record_id: str) -> MemoryRecord:
        with self.ctx.cold.read() as session:
            record = session.facts.current(scope, [record_id]).get(record_id)
        if record is None:
            raise MemoryNotFound(f"No memory {record_id!r} in {scope}.")
        return record

    def page(
        self,
        scope: AnyScope,
        *,
        after: int = 0,
        limit: int = 50,
        tier: str | None = None,
        entity: str | None = None,
        include_invalidated: bool = False,
    ) -> RecordPage:
        """Current records in insertion order, a page at a time (``after`` is the cursor)."""
        with self.ctx.cold.read() as session:
            rows = session.facts.page(
                scope,
                after=after,
                limit=limit + 1,
                tier=parse_tier(tier) if tier is not None else None,
                entity=entity,
                include_invalidated=include_invalidated,
            )
        more = len(rows) > limit
        rows = rows[:limit]
        return RecordPage([r for _, r in rows], rows[-1][0] if more and rows else None)

    def graph(self, scope: AnyScope, *, max_nodes: int = 500) -> EntityGraph:
        """The entity graph of the scope's (or agent's) valid records."""
        with self.ctx.cold.read() as session:
            records = session.facts.valid(scope)
        return entity_graph(records, max_nodes)

    def history(self, scope: AnyScope, record_id: str) -> RecordHistory:
        return self._history.record(scope, record_id)

    def events(
        self, scope: AnyScope, *, after_id: int = 0, limit: int = 100, kinds: Sequence[str] = ()
    ) -> list[Event]:
        with self.ctx.cold.read() as session:
            return session.events.recent(scope, after_id=after_id, limit=limit, kinds=kinds)

    def working_set(self, scope: Scope) -> dict[str, MemoryRecord]:
        """The scope's valid records as the Hot tier holds them."""
        row = self.ctx.row(scope)
        if row is None:
            return {}
        working = self.ctx.hot.working_set(row)
        with working.lock:
            return dict(working.records)

    def stats(self, scope: AnyScope) -> Stats:
        """Counts and weights of a conversation or an agent, by queries on the Cold ROM."""
        deadline.check("before stats")
        with self.ctx.cold.read() as session:
            rows = (
                [session.scopes.get(scope)]
                if isinstance(scope, Scope)
                else session.scopes.of(scope)
            )
            present = [r for r in rows if r is not None]
            records = session.facts.counts_by_tier(scope)
            invalidated = session.facts.count_invalid(scope)
            turns = session.turns.count(scope)
            events = session.events.counts_by_kind(scope)
            # Weights from the Cold ROM's rows, streamed: never a working set loaded for
            # this (an agent-wide stats once loaded every conversation's, one by one).
            clocks = {row.pk: self.ctx.clock(row.turn) for row in present}
            histogram, total, weighed = [0] * 10, 0.0, 0
            for terms in session.facts.decay_terms(scope):
                if weighed % 4096 == 0:
                    deadline.check("while weighing records")
                now = clocks.get(terms.scope_pk)
                if now is None:
                    continue
                w = decayed_weight(
                    terms.weight0, terms.anchor_turn, terms.tier, terms.k, now, self.ctx.decay
                )
                histogram[min(9, int(w * 10))] += 1
                total, weighed = total + w, weighed + 1
        return Stats(
            scope=str(scope),
            turn=max((r.turn for r in present), default=0.0),
            records=records,
            invalidated=invalidated,
            turns=turns,
            events=events,
            hot_rows=self.ctx.hot.store.count(scope),
            mean_weight=total / weighed if weighed else None,
            weight_histogram=histogram,
        )

    # -- history, maintenance, snapshots ----------------------------------------------

    def rollback(self, scope: Scope, to_turn: float) -> RollbackResult:
        return self._history.rollback(scope, to_turn)

    def purge(self, scope: AnyScope) -> PurgeReceipt:
        return self._history.purge(scope)

    def maintain(self, scope: Scope) -> MaintenanceReport:
        return self._maintenance.run(scope)

    def maintenance_due(self, scope: Scope) -> bool:
        return self._maintenance.due(scope)

    def preload(self, max_scopes: int, stop: threading.Event | None = None) -> int:
        """Load the working sets and archives of recently written scopes into RAM.

        Most recently written first, until ``max_scopes`` are loaded, the caches hold half
        their budget (the rest is for the scopes actually searched), or ``stop`` is set.
        Returns how many scopes were loaded. A scope being searched meanwhile is loaded
        once: its first search waits for this load rather than starting another.
        """
        caches = (self.ctx.hot.cache, self.ctx.archive.cache)
        if max_scopes <= 0 or not all(cache.enabled for cache in caches):
            return 0
        with self.ctx.cold.read() as session:
            rows = session.scopes.recent_among(session.scopes.agents(), max_scopes)
        loaded = 0
        for row in rows:
            if stop is not None and stop.is_set():
                break
            if any(cache.nbytes() * 2 >= cache.max_bytes for cache in caches):
                break
            self._warm_row(row)
            loaded += 1
        return loaded

    def _warm(self, scope: Scope) -> None:
        """Load the scope's working set and archive as the log now stands (a background
        load: the row is read when it runs, not when it was asked for)."""
        row = self.ctx.row(scope)
        if row is not None and self.ctx.hot.cache.enabled:
            self._warm_row(row)

    def _warm_row(self, row: ScopeRow) -> None:
        self.ctx.hot.working_set(row)
        if not self.ctx.cold.vector_search:  # else the database searches the archive
            self.ctx.archive.index(row)

    def due_scopes(self, limit: int = 200) -> list[Scope]:
        """Scopes whose maintenance is due (what the background service walks)."""
        return self._maintenance.due_scopes(limit)

    def readiness(self) -> dict[str, str]:
        """Store states for ``/readyz``: raises unless the Cold ROM (the truth) answers.

        A Hot outage degrades but does not stop the service: writes are acknowledged by
        the Cold ROM and reads fall back to RAM or the Cold ROM.
        """
        self.ctx.cold.ping()
        try:
            self.ctx.hot.store.ping()
        except StoreUnavailable:
            return {"cold": "ok", "hot": "unavailable"}
        return {"cold": "ok", "hot": "ok"}

    def ping(self) -> None:
        """Raise :class:`StoreUnavailable` unless both stores answer."""
        self.ctx.cold.ping()
        self.ctx.hot.store.ping()

    def store_sizes(self) -> StoreSizes:
        """How big the stores are (for metrics; no tenant data)."""
        return StoreSizes(
            cold_bytes=self.ctx.cold.size_bytes(),
            hot_rows=self.ctx.hot.store.total_rows(),
            cache_bytes=self.ctx.hot.cache.nbytes() + self.ctx.archive.cache.nbytes(),
        )

    def flush(self) -> int:
        """Write deferred Hot changes (reinforcements) to LanceDB now."""
        return self.ctx.flush_hot()

    def compact(self, *, planner_stats: bool = True) -> dict[str, int]:
        """Flush, drop removed Hot rows, merge LanceDB fragments, prune old versions, and
        (unless ``planner_stats`` is false: a pass the write volume triggered) refresh the
        Cold ROM's planner statistics."""
        self.flush()
        if planner_stats:
            self.ctx.cold.optimize()
        return self.ctx.hot.store.compact()

    def compaction_due(self) -> bool:
        """Whether the Hot table has grown enough fragments or versions to compact now."""
        return self.ctx.hot.store.compaction_due(self.settings.maintenance.compaction_max_fragments)

    def erase(self) -> dict[str, Erasure]:
        """Rewrite both stores so nothing deleted survives in their files (``nmafc erase``).

        Run it with the service stopped: on PostgreSQL it takes an exclusive lock on every
        tenant table in turn; on LanceDB it also deletes the files of failed transactions,
        which a concurrent writer's commit in progress would still need.
        """
        self.flush()
        return {"cold": self.ctx.cold.erase_all(), "hot": self.ctx.hot.store.erase_all()}

    def export_snapshot(self, scope: Scope, path: Path) -> dict[str, int]:
        return self._snapshots.export(scope, path)

    def import_snapshot(self, scope: Scope, path: Path) -> dict[str, int]:
        return self._snapshots.import_(scope, path)

    # -- for what the service runs beside the engine ----------------------------------

    def conversations(
        self, agents: Sequence[str] | None, limit: int
    ) -> tuple[list[Conversation], bool]:
        """The conversations of ``agents`` (None: every agent), and whether ``limit`` cut them."""
        return conversations(self.ctx.cold, agents, limit)

    def lease(self, name: str) -> AbstractContextManager[bool]:
        """Hold the named lease if no process (in any replica) does; yields whether it is held."""
        return self.ctx.cold.lease(name)

    @property
    def cold_store(self) -> ColdStore:
        """The Cold ROM, for the parts the lifespan wires beside the engine (keys, live tail)."""
        return self.ctx.cold

    def close(self) -> None:
        self._loads.close()  # before the stores close under a load still running
        try:
            self.flush()
        except StoreUnavailable as exc:  # the log has it all; the next start replays it
            log.warning("Hot not flushed at close: %s", exc.detail)
        if self.ctx.hot.store.guard is not None:
            self.ctx.hot.store.guard.close()
        self._pool.shutdown(wait=True)
        self.ctx.batching.close()
        self.embedder.close()
        closer = getattr(self.ctx.extractor, "close", None)
        if callable(closer):  # the LLM extractor owns an HTTP client and a loop thread
            closer()
        self.ctx.cold.close()


def _extractor(settings: Settings) -> Extractor:
    if settings.extractor == "verbatim":
        return VerbatimExtractor()
    rules = RuleExtractor(
        ExtractionConfig(
            min_importance=settings.extraction.min_importance,
            max_facts_per_message=settings.extraction.max_facts_per_message,
            max_assistant_facts=settings.extraction.max_assistant_facts,
        )
    )
    if settings.extractor == "llm":
        from nmafc.extraction.llm import llm_extractor

        return llm_extractor(settings, fallback=rules)
    return rules


def _secret(value: object) -> str | None:
    return None if value is None else value.get_secret_value()  # type: ignore[attr-defined]

"""Recall: hybrid retrieval over Hot and Cold, fused, budgeted, rendered, then reinforced.

For a query: search the Cold ROM by keyword over facts and raw turns (and the turns said
on any date the question names) while the query is embedded; scan the working set and the
archive by cosine; walk the entity graph from the best hits; fuse everything with
Reciprocal Rank Fusion; scale each fact by its decayed weight (a bounded multiplier, never
a filter); keep ``rerank_top_k``; render facts and graded source turns within the budget.

Only the facts the recall *used* are reinforced: rendered, and relevant to the question by
the rule of :mod:`nmafc.core.reinforcement` (cosine floors, absolute and relative to the
best hit, and a cap), at most once per turn of the scope, in one batched write per scope. A
point-in-time recall (``as_of``) keeps every source, raw turns included, to what was said
by then (the rule is :class:`FactFilter`'s) and reinforces nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from nmafc import deadline
from nmafc.core.aggregate import is_aggregate
from nmafc.core.decay import weight_at
from nmafc.core.lifecycle import as_seen_at
from nmafc.core.query_dates import periods
from nmafc.core.ranking import rrf
from nmafc.core.records import MemoryRecord
from nmafc.core.reinforcement import due, used
from nmafc.core.rendering import Candidate, Hydration, Rendered, render
from nmafc.core.retrieval import RetrievalConfig
from nmafc.core.scope import AnyScope, Scope
from nmafc.core.text import keyword_terms
from nmafc.core.turns import Turn
from nmafc.engine import candidates as lists
from nmafc.engine.context import EngineContext
from nmafc.engine.fanout import (
    known_in,
    question_entities,
    ram_fanout_hits,
    store_fanout_hits,
    without_names,
)
from nmafc.engine.scope_loads import ScopeLoads
from nmafc.errors import InvalidInput, StoreUnavailable
from nmafc.index.working_set import Vector, WorkingSet
from nmafc.storage.cold import ScopeRow
from nmafc.storage.cold.keyword import VALID_ONLY, FactFilter

log = logging.getLogger(__name__)


# Not frozen: a recall builds one of each per candidate (about a hundred), and a frozen
# dataclass's __init__ (an object.__setattr__ per field) took six times as long.
@dataclass(slots=True)
class ScoreBreakdown:
    """Why a hit was recalled: its fused score and what each signal contributed."""

    fused: float
    vector: float | None = None
    keyword: float | None = None
    graph_hops: int | None = None
    weight: float | None = None
    ranks: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Hit:
    kind: Literal["fact", "turn"]
    id: str
    content: str
    score: float
    breakdown: ScoreBreakdown
    record: MemoryRecord | None = None
    turn: Turn | None = None


@dataclass(frozen=True, slots=True)
class RecallResult:
    query: str
    context: str
    tokens: int
    hits: list[Hit]
    fact_ids: list[str]
    turn_ids: list[int]
    evidence_turn_ids: list[int]
    reinforced: int
    preset: str


@dataclass(frozen=True, slots=True)
class RecallOptions:
    budget_tokens: int = 1000
    as_of: float | None = None
    as_of_time: datetime | None = None
    include_invalidated: bool = False
    include_archived: bool = True
    reinforce: bool = True
    # Most hits returned (None: every candidate). The context is rendered from at least the
    # preset's rerank_top_k candidates whatever this is: it sizes the answer, not the context.
    top_k: int | None = None


@dataclass(frozen=True, slots=True)
class _Reach:
    """The RAM sets one recall scans, and what it searches in the stores instead."""

    live: list[WorkingSet]
    archives: list[WorkingSet]
    live_elsewhere: bool  # some working sets are not in RAM: LanceDB searches the agent
    archive_elsewhere: bool  # archives not in RAM: the Cold ROM ranks them (pgvector, scan)
    load_later: Scope | None = None  # to load in the background once this recall is done

    @property
    def elsewhere(self) -> bool:
        return self.live_elsewhere or self.archive_elsewhere


class Recall:
    def __init__(
        self,
        ctx: EngineContext,
        pool: Executor,
        count_tokens: Callable[[str], int],
        reinforce: Callable[[Scope, Sequence[str]], Sequence[MemoryRecord]],
        loads: ScopeLoads,
    ) -> None:
        self.ctx = ctx
        self.pool = pool
        self.count_tokens = count_tokens
        self._reinforce = reinforce
        self.loads = loads

    def recall(
        self,
        scope: AnyScope,
        query: str,
        options: RecallOptions,
        config: RetrievalConfig,
        preset_name: str,
    ) -> RecallResult:
        if not query.strip():
            raise InvalidInput("The query is empty.", fix="Send a non-empty `query`.")
        if options.budget_tokens < 1:
            raise InvalidInput("`budget_tokens` must be positive.", fix="Use e.g. 1000.")
        deadline.check("before recall")
        rows = self._rows(scope)
        if not rows:
            return RecallResult(query, "", 0, [], [], [], [], 0, preset_name)
        where = FactFilter(
            include_invalidated=options.include_invalidated,
            include_archived=options.include_archived,
            as_of=options.as_of,
            as_of_time=options.as_of_time,
        )
        history = where.point_in_time or options.include_invalidated
        reach = self._reach(scope, rows, options, history)
        try:
            return self._search(scope, query, rows, where, history, reach, options, config,
                                preset_name)  # fmt: skip
        finally:
            # Started once this recall is answered (or failed): on a small machine a load
            # running meanwhile would slow the very search it spares from waiting.
            if reach.load_later is not None:
                self.loads.start(reach.load_later)

    def _search(
        self,
        scope: AnyScope,
        query: str,
        rows: Sequence[ScopeRow],
        where: FactFilter,
        history: bool,
        reach: _Reach,
        options: RecallOptions,
        config: RetrievalConfig,
        preset_name: str,
    ) -> RecallResult:
        deadline.check("after loading the working sets")
        live, sets = reach.live, [*reach.live, *reach.archives]  # working sets, then archives
        cold, found = self.ctx.cold, lists.Pool()
        # Facts held in RAM are looked up there; history, an archive kept only in the
        # database and conversations not in RAM need the Cold ROM's keyword index.
        keyword_in_ram = not history and not reach.elsewhere
        # Cold keyword lists run in worker threads while the query is embedded and scanned.
        keyword = (
            None
            if keyword_in_ram
            else self.pool.submit(
                lists.keyword_hits, cold, scope, query, where, config.keyword_top_k,
                sum(len(s) for s in live) or None, found, count_corpus=reach.live_elsewhere,
            )
        )  # fmt: skip
        # A scope whose clock never moved holds no turns (every stored turn is numbered from
        # 1 and advances the clock): its turn searches are empty without asking the database.
        said = config.turn_top_k > 0 and any(row.turn > 0 for row in rows)
        turned: Future[list[int]] | None = None
        if said:
            turned = self.pool.submit(
                lists.turn_hits, cold, scope, query, config.turn_top_k,
                int(sum(row.turn for row in rows)), found,
                rows[0].pk if isinstance(scope, Scope) else None, where,
            )  # fmt: skip
        # Most questions name no date: those need no thread for the dated-turn search.
        dated = (
            self.pool.submit(
                lists.dated_turn_hits, cold, scope, query, config.turn_top_k, found, where
            )
            if said and periods(query)
            else None
        )
        if history:
            query_vector = self.ctx.batching.embed(query)
            vector = lists.cold_vector_hits(
                cold, scope, query_vector, where, config.vector_top_k, found
            )
        else:
            query_vector, per_set = self.ctx.batching.search(query, sets, config.vector_top_k)
            vector = lists.vector_hits(sets, per_set, config.vector_top_k, found)
            vector = self._elsewhere(scope, reach, query_vector, vector, config, found)
        deadline.check("after the vector search")
        graph = lists.graph_hits(live, vector, query_vector, config, found)
        fanout = [] if history else self._fanout(scope, reach, query, query_vector, config, found)
        keyword_ids = (
            keyword.result()
            if keyword is not None
            else lists.ram_keyword_hits(sets, query, config.keyword_top_k, found)
        )
        ranked = {
            "vector": [f"f:{rid}" for rid in vector],
            "keyword": [f"f:{rid}" for rid in keyword_ids],
            "turns": [f"t:{tid}" for tid in (turned.result() if turned is not None else ())],
            "dates": [f"t:{tid}" for tid in (dated.result() if dated is not None else ())],
            "graph": [f"f:{rid}" for rid in graph],
            "fanout": [f"f:{rid}" for rid in fanout],
        }
        if where.point_in_time:
            self._as_it_was(scope, found, where)
        missing = [rid for rid in found.records if rid not in found.cosine]
        found.cosine.update(lists.cosines(sets, query_vector, missing))
        if reach.elsewhere:
            missing = [rid for rid in missing if rid not in found.cosine]
            found.cosine.update(lists.cold_cosines(cold, scope, query_vector, missing, found))
        deadline.check("before ranking")
        limit = max(config.rerank_top_k, options.top_k or 0)
        hits = self._fuse(ranked, config, found, rows)[:limit]

        if fanout:  # a list question: breadth over whole turns
            config = config.model_copy(update={"source_share": config.aggregate_source_share})
        rendered = self._render(scope, query, hits, options.budget_tokens, config)
        reinforced = 0
        deadline.check("before reinforcing")
        if options.reinforce and not history:
            cosine = {h.id: h.breakdown.vector for h in hits if h.breakdown.vector is not None}
            shown = {*rendered.fact_ids, *rendered.shown_as_turns}
            ranked_shown = [h.id for h in hits if h.id in shown]  # in rank order
            chosen = used(ranked_shown, cosine, self.ctx.settings.reinforcement.rule())
            reinforced = self._reinforce_used(rows, found.records, chosen)
        return RecallResult(
            query=query,
            context=rendered.text,
            tokens=rendered.tokens,
            hits=hits[: options.top_k],
            fact_ids=rendered.fact_ids,
            turn_ids=rendered.turn_ids,
            evidence_turn_ids=sorted(rendered.covered_turn_ids),
            reinforced=reinforced,
            preset=preset_name,
        )

    def _fanout(
        self,
        scope: AnyScope,
        reach: _Reach,
        query: str,
        query_vector: Vector,
        config: RetrievalConfig,
        found: lists.Pool,
    ) -> list[str]:
        """For a list or count question, the facts about the people it names, best first.

        Ranked by the question without the names (one more embedding, only for such
        questions), so "which cities has Jon visited?" reaches each city Jon spoke of.
        Working sets not in RAM are searched in LanceDB, all of the reach then (as
        :meth:`_elsewhere` does), so a question gets the same list either way.
        """
        if config.fanout_limit == 0 or not is_aggregate(query):
            return []
        hot, live = self.ctx.hot.store, reach.live
        if not reach.live_elsewhere and not live:
            return []
        try:
            known = (
                (lambda keys: hot.known_entities(scope, keys))
                if reach.live_elsewhere
                else known_in(live)
            )
            names = question_entities(query, known)
            if not names:
                return []
            asked = without_names(query, names.values())
            asked_vector = self.ctx.batching.embed(asked) if keyword_terms(asked) else query_vector
            if reach.live_elsewhere:
                return store_fanout_hits(
                    hot, self.ctx.cold, scope, list(names), asked_vector, config.fanout_limit, found
                )
            return ram_fanout_hits(live, list(names), asked_vector, config.fanout_limit, found)
        except StoreUnavailable as exc:  # the other lists still answer
            log.warning("no fanout for %s: %s", scope, exc.detail)
            return []

    def _reach(
        self, scope: AnyScope, rows: Sequence[ScopeRow], options: RecallOptions, history: bool
    ) -> _Reach:
        """The RAM sets a recall scans, and what it leaves to one bounded query per list.

        One conversation's sets are loaded when RAM lacks them: its next recalls reuse
        them. A small conversation's are loaded first (≈ 0.2 s at 2,000 records); a
        larger one's in the background while this recall searches the stores as below,
        so a first search never waits seconds for a load. An agent-wide recall never loads
        one: it scans the sets RAM holds as fresh as the log, and searches the rest of the
        agent at once (LanceDB for live facts, the Cold ROM for keywords and the archive),
        so its cost does not grow with a load per conversation. With the cache off a
        conversation is searched the same way: a set loaded for one recall and dropped
        would cost a full read of the scope each time. History is searched in the Cold
        ROM alone.
        """
        if history:
            return _Reach([], [], live_elsewhere=False, archive_elsewhere=False)
        # With pgvector the database searches the archive; otherwise a RAM index does.
        archive_in_ram = options.include_archived and not self.ctx.cold.vector_search
        in_cold = options.include_archived and not archive_in_ram
        later: Scope | None = None
        if isinstance(scope, Scope) and self.ctx.hot.cache.enabled:
            if self._load_now(rows[0]):
                live = [self._load(row) for row in rows]
                archives = [self.ctx.archive.index(row) for row in rows] if archive_in_ram else []
                return _Reach(live, archives, live_elsewhere=False, archive_elsewhere=in_cold)
            later = scope
        live = [ws for row in rows if (ws := self.ctx.hot.cached(row)) is not None]
        archives = (
            [ws for row in rows if (ws := self.ctx.archive.cached(row)) is not None]
            if archive_in_ram
            else []
        )
        return _Reach(
            live,
            archives,
            live_elsewhere=len(live) < len(rows),
            archive_elsewhere=in_cold or (archive_in_ram and len(archives) < len(rows)),
            load_later=later,
        )

    def _load_now(self, row: ScopeRow) -> bool:
        """Whether this recall loads the conversation's working set and waits for it.

        Yes when RAM holds a stale set of it (catching up reads only the log after it) or
        the conversation is small; not while a background load of it runs.
        """
        if self.ctx.hot.held(row):
            return True
        if self.loads.pending(row.scope):
            return False
        with self.ctx.cold.read() as session:
            size = sum(session.facts.counts_by_tier(row.scope).values())
        return size <= self.ctx.settings.hot.cache_inline_load_max_records

    def _load(self, row: ScopeRow) -> WorkingSet:
        deadline.check("before loading a working set")
        return self.ctx.hot.working_set(row)

    def _elsewhere(
        self,
        scope: AnyScope,
        reach: _Reach,
        query: Vector,
        vector: list[str],
        config: RetrievalConfig,
        found: lists.Pool,
    ) -> list[str]:
        """The RAM vector hits merged with those of the stores searching what RAM lacks."""
        cold, limit = self.ctx.cold, config.vector_top_k
        more: list[str] = []
        if reach.live_elsewhere:
            try:
                more += lists.hot_vector_hits(self.ctx.hot.store, cold, scope, query, limit, found)
            except StoreUnavailable as exc:  # Hot is a cache of the log: ask the Cold ROM
                log.warning("agent-wide search of %s from the Cold ROM: %s", scope, exc.detail)
                more += lists.cold_vector_hits(cold, scope, query, VALID_ONLY, limit, found)
        if reach.archive_elsewhere:
            more += lists.cold_archive_hits(cold, scope, query, limit, found)
        return lists.by_cosine([*vector, *more], found, limit) if more else vector

    def _as_it_was(self, scope: AnyScope, found: lists.Pool, where: FactFilter) -> None:
        """Point in time: each fact as memory held it then, with the source turns said by then.

        Every list already keeps to ``where`` (see :class:`FactFilter` for the rule); this
        undoes what happened to the facts afterwards: a later closing, turns a merge added.
        """
        wanted = list({t for record in found.records.values() for t in record.source_turn_ids})
        said: dict[int, Turn] = {}
        if wanted:
            with self.ctx.cold.read() as session:
                said = session.turns.by_ids(scope, wanted, said=where.said())
        found.records = {
            rid: as_seen_at(record, where.as_of, where.as_of_time, said)
            for rid, record in found.records.items()
        }

    def _rows(self, scope: AnyScope) -> list[ScopeRow]:
        with self.ctx.cold.read() as session:
            if isinstance(scope, Scope):
                row = session.scopes.get(scope)
                return [] if row is None else [row]
            return session.scopes.of(scope)

    def _fuse(
        self,
        ranked: dict[str, list[str]],
        config: RetrievalConfig,
        found: lists.Pool,
        rows: Sequence[ScopeRow],
    ) -> list[Hit]:
        """RRF over the lists; facts scaled by their decayed weight; best first."""
        now_by_scope = {
            (row.scope.agent_id, row.scope.conversation_id): self.ctx.clock(row.turn)
            for row in rows
        }
        influence = config.weight_influence
        hits: list[Hit] = []
        for item in rrf(ranked, k=config.rrf_k, weights=config.list_weights):
            kind, key = item.key.split(":", 1)
            if kind == "t":
                turn = found.turns[int(key)]
                breakdown = ScoreBreakdown(
                    fused=item.score, keyword=found.turn_keyword.get(turn.id), ranks=item.ranks
                )
                hits.append(Hit("turn", key, turn.content, item.score, breakdown, turn=turn))
                continue
            record = found.records[key]
            now = now_by_scope.get((record.agent_id, record.conversation_id), 0.0)
            weight = weight_at(record, now, self.ctx.decay)
            score = item.score * (1 - influence + influence * weight)
            breakdown = ScoreBreakdown(
                fused=score,
                vector=found.cosine.get(key),
                keyword=found.keyword.get(key),
                graph_hops=found.hops.get(key),
                weight=weight,
                ranks=item.ranks,
            )
            hits.append(Hit("fact", key, record.content, score, breakdown, record=record))
        hits.sort(key=lambda h: -h.score)
        return hits

    def _render(
        self,
        scope: AnyScope,
        query: str,
        hits: Sequence[Hit],
        budget: int,
        config: RetrievalConfig,
    ) -> Rendered:
        # The best facts bring their source turns for graded hydration; with turn_for_fact
        # every fact may be shown through its turn, so fetch the turns of all of them.
        facts = [h.record for h in hits if h.record is not None]
        lead = facts if config.turn_for_fact > 0 else facts[: config.hydrate_full_turns]
        wanted = [t for r in lead for t in r.source_turn_ids]
        turns: dict[int, Turn] = {}
        if wanted:  # facts stored explicitly have no source turns: no transaction for them
            with self.ctx.cold.read() as session:
                turns = session.turns.by_ids(scope, wanted)
        candidates = [
            Candidate(
                record=h.record,
                turn=h.turn,
                sources=tuple(
                    turns[t] for t in (h.record.source_turn_ids if h.record else ()) if t in turns
                ),
            )
            for h in hits
        ]
        return render(
            candidates,
            budget_tokens=budget,
            count=self.count_tokens,
            query_terms=keyword_terms(query),
            hydration=Hydration(
                full_turns=config.hydrate_full_turns,
                trimmed_lines=config.hydrate_lines,
                source_share=config.source_share,
                turn_for_fact=config.turn_for_fact,
            ),
        )

    def _reinforce_used(
        self, rows: Sequence[ScopeRow], records: dict[str, MemoryRecord], fact_ids: Sequence[str]
    ) -> int:
        """Strengthen the used facts, one batched write per scope; returns how many were.

        Facts this recall knows were reinforced at this turn already are left out, so a
        question repeated before the conversation moves on writes nothing; the write
        checks the rule again against the stored record.
        """
        rule = self.ctx.settings.reinforcement.rule()
        now = {row.scope: self.ctx.clock(row.turn) for row in rows}
        by_scope: dict[Scope, list[str]] = {}
        for rid in fact_ids:
            record = records[rid]
            at = now.get(record.scope)
            if record.is_valid and at is not None and due(record, at, rule):
                by_scope.setdefault(record.scope, []).append(rid)
        total = 0
        for row in rows:
            ids = by_scope.get(row.scope)
            if ids:
                total += len(self._reinforce(row.scope, ids))
        return total

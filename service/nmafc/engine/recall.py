"""Recall: hybrid retrieval over Hot and Cold, fused, budgeted, rendered, then reinforced.

For a query: embed it; in parallel search the Hot working set by cosine, the Cold ROM by
keyword over facts and over raw turns, and walk the entity graph from the best Hot hits;
fuse with Reciprocal Rank Fusion; scale by decayed weight (bounded, never a filter); keep
``rerank_top_k``; render facts and their source turns within the token budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import numpy as np

from nmafc.core.decay import weight_at
from nmafc.core.ranking import rrf
from nmafc.core.records import MemoryRecord
from nmafc.core.rendering import Rendered, SourceTurn, render
from nmafc.core.retrieval import RetrievalConfig
from nmafc.core.scope import AnyScope, Scope
from nmafc.core.text import keyword_terms, overlap, sentences
from nmafc.core.turns import Turn
from nmafc.engine.context import EngineContext
from nmafc.errors import InvalidInput
from nmafc.storage.cold import ScopeRow
from nmafc.storage.cold.keyword import FactFilter
from nmafc.storage.hot.working_set import WorkingSet

Vector = np.ndarray


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Why a hit was recalled: its fused score and what each signal contributed."""

    fused: float
    vector: float | None = None
    keyword: float | None = None
    graph_hops: int | None = None
    weight: float | None = None
    ranks: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
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
    include_archived: bool = False
    reinforce: bool = True
    top_k: int | None = None


class Recall:
    def __init__(
        self,
        ctx: EngineContext,
        pool: Executor,
        count_tokens: Callable[[str], int],
        reinforce: Callable[[Scope, Sequence[str]], object],
    ) -> None:
        self.ctx = ctx
        self.pool = pool
        self.count_tokens = count_tokens
        self._reinforce = reinforce

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
        rows = self._rows(scope)
        if not rows:
            return RecallResult(query, "", 0, [], [], [], [], 0, preset_name)
        fact_filter = FactFilter(
            include_invalidated=options.include_invalidated,
            include_archived=options.include_archived,
            as_of=options.as_of,
            as_of_time=options.as_of_time,
        )
        point_in_time = fact_filter.point_in_time or options.include_invalidated
        sets = [] if point_in_time else [self.ctx.hot.working_set(row) for row in rows]
        facts_size = sum(len(s) for s in sets) or None
        turns_size = int(sum(row.turn for row in rows))
        keyword_future = self.pool.submit(
            self._keyword, scope, query, fact_filter, config, facts_size
        )
        turns_future = self.pool.submit(self._turns, scope, query, config, turns_size)
        # Keyword searches run while the query is embedded and the vectors are scanned.
        query_vector = self.ctx.embedder.embed([query])[0]
        records: dict[str, MemoryRecord] = {}
        cosine: dict[str, float] = {}
        if point_in_time:
            vector_ids = self._cold_vector(
                scope, query_vector, fact_filter, config, records, cosine
            )
        else:
            vector_ids = self._hot_vector(sets, query_vector, config, records, cosine)
        graph_ids, hops = self._spread(sets, vector_ids, query_vector, config, records, cosine)
        keyword_hits = keyword_future.result()
        turn_hits = turns_future.result()
        keyword_score: dict[str, float] = {}
        for record, relevance in keyword_hits:
            records.setdefault(record.id, record)
            keyword_score[record.id] = relevance
        turns = {t.id: t for t, _ in turn_hits}
        turn_score = {t.id: relevance for t, relevance in turn_hits}
        self._fill_cosine(sets, query_vector, records, cosine)

        fused = rrf(
            {
                "vector": [f"f:{rid}" for rid in vector_ids],
                "keyword": [f"f:{r.id}" for r, _ in keyword_hits],
                "turns": [f"t:{t.id}" for t, _ in turn_hits],
                "graph": [f"f:{rid}" for rid in graph_ids],
            },
            k=config.rrf_k,
            weights=config.list_weights,
        )
        now_by_scope = {
            (row.scope.agent_id, row.scope.conversation_id): self.ctx.clock(row.turn)
            for row in rows
        }
        hits: list[Hit] = []
        for item in fused:
            kind, key = item.key.split(":", 1)
            if kind == "f":
                record = records[key]
                now = now_by_scope.get((record.agent_id, record.conversation_id), 0.0)
                weight = weight_at(record, now, self.ctx.decay)
                score = item.score * (
                    1 - config.weight_influence + config.weight_influence * weight
                )
                breakdown = ScoreBreakdown(
                    fused=score,
                    vector=cosine.get(key),
                    keyword=keyword_score.get(key),
                    graph_hops=hops.get(key),
                    weight=weight,
                    ranks=dict(item.ranks),
                )
                hits.append(Hit("fact", key, record.content, score, breakdown, record=record))
            else:
                turn = turns[int(key)]
                breakdown = ScoreBreakdown(
                    fused=item.score, keyword=turn_score.get(int(key)), ranks=dict(item.ranks)
                )
                hits.append(Hit("turn", key, turn.content, item.score, breakdown, turn=turn))
        hits.sort(key=lambda h: -h.score)
        hits = hits[: options.top_k or config.rerank_top_k]

        rendered = self._render(scope, query, hits, options.budget_tokens, config)
        reinforced = 0
        if options.reinforce and not point_in_time:
            reinforced = self._reinforce_rendered(rows, records, rendered.fact_ids)
        evidence = set(rendered.turn_ids)
        for rid in rendered.fact_ids:
            evidence.update(records[rid].source_turn_ids)
        return RecallResult(
            query=query,
            context=rendered.text,
            tokens=rendered.tokens,
            hits=hits,
            fact_ids=rendered.fact_ids,
            turn_ids=rendered.turn_ids,
            evidence_turn_ids=sorted(evidence),
            reinforced=reinforced,
            preset=preset_name,
        )

    # -- candidate lists ----------------------------------------------------------------

    def _rows(self, scope: AnyScope) -> list[ScopeRow]:
        with self.ctx.cold.read() as session:
            if isinstance(scope, Scope):
                row = session.scopes.get(scope)
                return [] if row is None else [row]
            return session.scopes.of(scope)

    def _keyword(
        self,
        scope: AnyScope,
        query: str,
        where: FactFilter,
        config: RetrievalConfig,
        corpus_size: int | None,
    ) -> list[tuple[MemoryRecord, float]]:
        if config.keyword_top_k == 0:
            return []
        with self.ctx.cold.read() as session:
            return session.search.facts(
                scope, query, limit=config.keyword_top_k, where=where, corpus_size=corpus_size
            )

    def _turns(
        self, scope: AnyScope, query: str, config: RetrievalConfig, corpus_size: int
    ) -> list[tuple[Turn, float]]:
        if config.turn_top_k == 0:
            return []
        with self.ctx.cold.read() as session:
            return session.search.turns(
                scope, query, limit=config.turn_top_k, corpus_size=corpus_size
            )

    @staticmethod
    def _hot_vector(
        sets: Sequence[WorkingSet],
        query: Vector,
        config: RetrievalConfig,
        records: dict[str, MemoryRecord],
        cosine: dict[str, float],
    ) -> list[str]:
        if config.vector_top_k == 0:
            return []
        scored: list[tuple[float, str]] = []
        for working in sets:
            for rid, score in working.search(query, config.vector_top_k):
                records[rid] = working.records[rid]
                cosine[rid] = score
                scored.append((score, rid))
        scored.sort(key=lambda s: -s[0])
        return [rid for _, rid in scored[: config.vector_top_k]]

    def _cold_vector(
        self,
        scope: AnyScope,
        query: Vector,
        where: FactFilter,
        config: RetrievalConfig,
        records: dict[str, MemoryRecord],
        cosine: dict[str, float],
    ) -> list[str]:
        """Point-in-time and history searches scan the Cold ROM's fact versions by cosine."""
        if config.vector_top_k == 0:
            return []
        with self.ctx.cold.read() as session:
            candidates, vectors = session.facts.matching(scope, where.condition())
        if not candidates:
            return []
        scores = vectors @ np.asarray(query, dtype=np.float32)
        order = np.argsort(-scores, kind="stable")
        chosen: list[str] = []
        for index in order:
            record = candidates[int(index)]
            if record.id in cosine:
                continue  # an older version of a record already taken
            records[record.id] = record
            cosine[record.id] = float(scores[index])
            chosen.append(record.id)
            if len(chosen) >= config.vector_top_k:
                break
        return chosen

    @staticmethod
    def _spread(
        sets: Sequence[WorkingSet],
        seeds: Sequence[str],
        query: Vector,
        config: RetrievalConfig,
        records: dict[str, MemoryRecord],
        cosine: dict[str, float],
    ) -> tuple[list[str], dict[str, int]]:
        """Spreading activation: BFS over shared entities from the best vector hits."""
        if config.max_hops == 0 or config.graph_limit == 0 or not sets:
            return [], {}
        hops: dict[str, int] = {rid: 0 for rid in seeds[: config.graph_seeds]}
        frontier = list(hops)
        found: list[tuple[int, float, str]] = []
        for hop in range(1, config.max_hops + 1):
            entities: set[str] = set()
            for rid in frontier:
                record = records.get(rid)
                if record is not None:
                    entities.add(record.entity)
                    entities.update(record.related_entities)
            reached: list[str] = []
            for working in sets:
                for rid in working.neighbours(entities):
                    if rid not in hops:
                        hops[rid] = hop
                        records.setdefault(rid, working.records[rid])
                        reached.append(rid)
            if reached:
                by_id = _cosines(sets, query, reached)
                cosine.update(by_id)
                found += [(hop, -by_id.get(rid, 0.0), rid) for rid in reached]
            frontier = reached
            if len(found) >= config.graph_limit * 4 or not frontier:
                break
        found.sort()
        chosen = [rid for _, _, rid in found[: config.graph_limit]]
        return chosen, {rid: hops[rid] for rid in chosen}

    @staticmethod
    def _fill_cosine(
        sets: Sequence[WorkingSet],
        query: Vector,
        records: dict[str, MemoryRecord],
        cosine: dict[str, float],
    ) -> None:
        missing = [rid for rid in records if rid not in cosine]
        if missing and sets:
            cosine.update(_cosines(sets, query, missing))

    # -- rendering and reinforcement ----------------------------------------------------

    def _render(
        self,
        scope: AnyScope,
        query: str,
        hits: Sequence[Hit],
        budget: int,
        config: RetrievalConfig,
    ) -> Rendered:
        facts = [h.record for h in hits if h.record is not None]
        wanted: list[int] = []
        for hit in hits:
            if hit.turn is not None:
                wanted.append(hit.turn.id)
            elif hit.record is not None:
                wanted.extend(hit.record.source_turn_ids)
        wanted = list(dict.fromkeys(wanted))
        limit = config.hydrate_full_turns + config.hydrate_trimmed_turns
        known = {h.turn.id: h.turn for h in hits if h.turn is not None}
        need = [t for t in wanted[:limit] if t not in known]
        if need:
            with self.ctx.cold.read() as session:
                known.update(session.turns.by_ids(scope, need))
        terms = keyword_terms(query)
        sources: list[SourceTurn] = []
        for position, turn_id in enumerate(t for t in wanted if t in known):
            if position >= limit:
                break
            turn = known[turn_id]
            if turn.retracted:
                continue
            if position < config.hydrate_full_turns:
                sources.append(SourceTurn(turn))
            else:
                sources.append(
                    SourceTurn(turn, best_lines(turn.content, terms, config.hydrate_lines))
                )
        return render(
            facts,
            sources,
            budget_tokens=budget,
            count=self.count_tokens,
            source_share=config.source_share,
        )

    def _reinforce_rendered(
        self, rows: Sequence[ScopeRow], records: dict[str, MemoryRecord], fact_ids: Sequence[str]
    ) -> int:
        by_scope: dict[Scope, list[str]] = {}
        for rid in fact_ids:
            record = records[rid]
            if record.is_valid:
                by_scope.setdefault(record.scope, []).append(rid)
        total = 0
        for row in rows:
            ids = by_scope.get(row.scope)
            if ids:
                self._reinforce(row.scope, ids)
                total += len(ids)
        return total


def best_lines(text: str, terms: Sequence[str], keep: int) -> str:
    """The ``keep`` sentences of ``text`` sharing most terms with the query, in text order."""
    parts = sentences(text)
    if len(parts) <= keep:
        return text
    ranked = sorted(range(len(parts)), key=lambda i: (-overlap(list(terms), parts[i]), i))
    chosen = sorted(ranked[:keep])
    return " … ".join(parts[i] for i in chosen)


def _cosines(sets: Sequence[WorkingSet], query: Vector, ids: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    q = np.asarray(query, dtype=np.float32)
    for working in sets:
        for rid, vector in working.vectors(ids).items():
            out[rid] = float(vector @ q)
    return out

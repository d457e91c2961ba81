"""The ranked candidate lists recall fuses: vectors, keywords, raw turns, dates, the graph.

Each function returns ids best first and records what it learnt about each candidate
(its record, its cosine) in a shared :class:`Pool`, so the fused ranking can explain
every hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time

import numpy as np
import numpy.typing as npt

from nmafc.core.keyword import common_cap, discriminating, idf, index_term, tie_key
from nmafc.core.query_dates import periods
from nmafc.core.records import MemoryRecord
from nmafc.core.retrieval import RetrievalConfig
from nmafc.core.scope import AnyScope
from nmafc.core.text import keyword_terms, overlap
from nmafc.core.turns import Turn
from nmafc.index.working_set import WorkingSet
from nmafc.storage.cold import ColdStore
from nmafc.storage.cold.keyword import VALID_ONLY, FactFilter
from nmafc.storage.hot.lance import HotStore

Vector = npt.NDArray[np.float32]
Hits = list[tuple[str, float]]
_REPLY_DEPTH = 10  # how many of the best turn hits may bring their reply


@dataclass
class Pool:
    """Everything known about the candidates of one recall."""

    records: dict[str, MemoryRecord] = field(default_factory=dict)
    cosine: dict[str, float] = field(default_factory=dict)
    keyword: dict[str, float] = field(default_factory=dict)
    hops: dict[str, int] = field(default_factory=dict)
    turns: dict[int, Turn] = field(default_factory=dict)
    turn_keyword: dict[int, float] = field(default_factory=dict)


def vector_hits(
    sets: Sequence[WorkingSet], found: Sequence[Hits], limit: int, pool: Pool
) -> list[str]:
    """Exact cosine hits of the RAM working sets (and archives), merged across scopes.

    ``found`` holds each set's hits, best first, as the recall's scan returned them.
    """
    if limit == 0:
        return []
    scored: list[tuple[float, str]] = []
    for working, hits in zip(sets, found, strict=True):
        for rid, score in hits:
            record = working.records.get(rid)
            if record is None:
                continue  # removed by a write that landed after the scan
            pool.records[rid] = record
            pool.cosine[rid] = score
            scored.append((score, rid))
    scored.sort(key=lambda s: -s[0])
    return [rid for _, rid in scored[:limit]]


def cold_vector_hits(
    cold: ColdStore, scope: AnyScope, query: Vector, where: FactFilter, limit: int, pool: Pool
) -> list[str]:
    """Point-in-time and history searches scan the Cold ROM's fact versions by cosine."""
    if limit == 0:
        return []
    with cold.read() as session:
        candidates, vectors = session.facts.matching(scope, where.condition())
    if not candidates:
        return []
    scores = vectors @ np.asarray(query, dtype=np.float32)
    chosen: list[str] = []
    for index in np.argsort(-scores, kind="stable"):
        record = candidates[int(index)]
        if record.id in pool.cosine:
            continue  # an older version of a record already taken
        pool.records[record.id] = record
        pool.cosine[record.id] = float(scores[index])
        chosen.append(record.id)
        if len(chosen) >= limit:
            break
    return chosen


def hot_vector_hits(
    hot: HotStore, cold: ColdStore, scope: AnyScope, query: Vector, limit: int, pool: Pool
) -> list[str]:
    """Live facts nearest the query by one scope-prefiltered LanceDB search.

    For an agent-wide recall over conversations RAM does not hold: the records come from
    the Cold ROM by id (the truth; a record closed since its Hot row was written is left
    out), so no working set is loaded.
    """
    if limit == 0:
        return []
    nearest = hot.search(scope, query, limit)
    valid = valid_records(cold, scope, [rid for rid, _ in nearest], pool)
    chosen: list[str] = []
    for rid, cosine in nearest:
        if rid in valid:
            pool.cosine.setdefault(rid, cosine)
            chosen.append(rid)
    return chosen


def valid_records(cold: ColdStore, scope: AnyScope, ids: Sequence[str], pool: Pool) -> set[str]:
    """Those of ``ids`` (Hot rows' ids) whose record is valid, each now in the pool.

    Records the pool lacks come from the Cold ROM by id (the truth: a record closed since
    its Hot row was written is left out).
    """
    unknown = list(dict.fromkeys(rid for rid in ids if rid not in pool.records))
    current: dict[str, MemoryRecord] = {}
    if unknown:
        with cold.read() as session:
            current = session.facts.current(scope, unknown)
    valid: set[str] = set()
    for rid in ids:
        record = pool.records.get(rid) or current.get(rid)
        if record is not None and record.is_valid:
            pool.records.setdefault(rid, record)
            valid.add(rid)
    return valid


def cold_archive_hits(
    cold: ColdStore, scope: AnyScope, query: Vector, limit: int, pool: Pool
) -> list[str]:
    """The archive searched in the Cold ROM (pgvector, or a streamed scan), not a RAM index."""
    if limit == 0:
        return []
    with cold.read() as session:
        hits = session.facts.nearest_decayed(scope, query, limit)
    for record, cosine in hits:
        pool.records.setdefault(record.id, record)
        pool.cosine[record.id] = cosine
    return [record.id for record, _ in hits]


def by_cosine(ids: Sequence[str], pool: Pool, limit: int) -> list[str]:
    """Merge vector lists from several sources: best cosine first, each id once."""
    unique = list(dict.fromkeys(ids))
    unique.sort(key=lambda rid: -pool.cosine.get(rid, -1.0))
    return unique[:limit]


def cold_cosines(
    cold: ColdStore, scope: AnyScope, query: Vector, ids: Sequence[str], pool: Pool
) -> dict[str, float]:
    """Cosines for records found by other lists whose vectors live only in the Cold ROM."""
    wanted = [(rid, pool.records[rid].version) for rid in ids if rid in pool.records]
    if not wanted:
        return {}
    with cold.read() as session:
        vectors = session.facts.vectors(scope, wanted)
    q = np.asarray(query, dtype=np.float32)
    return {rid: float(vector @ q) for (rid, _), vector in vectors.items()}


def keyword_hits(
    cold: ColdStore,
    scope: AnyScope,
    query: str,
    where: FactFilter,
    limit: int,
    corpus_size: int | None,
    pool: Pool,
    *,
    count_corpus: bool = False,
) -> list[str]:
    """Cold ROM keyword search over facts (every version the filter admits).

    ``count_corpus`` counts the scope's valid facts for ``corpus_size`` first, when no RAM
    set knows it (see ``KeywordSearch.facts``).
    """
    if limit == 0:
        return []
    with cold.read() as session:
        if count_corpus:
            corpus_size = sum(session.facts.counts_by_tier(scope).values()) or None
        hits = session.search.facts(scope, query, limit=limit, where=where, corpus_size=corpus_size)
    for record, relevance in hits:
        pool.records.setdefault(record.id, record)
        pool.keyword[record.id] = relevance
    return [record.id for record, _ in hits]


def ram_keyword_hits(sets: Sequence[WorkingSet], query: str, limit: int, pool: Pool) -> list[str]:
    """Keyword search over the RAM working sets (and archives), merged across scopes.

    Ranks as the Cold ROM's FTS5 search does (BM25, common terms dropped by the same
    rule), with the corpus statistics of the sets searched together.
    """
    terms = list(dict.fromkeys(index_term(t) for t in keyword_terms(query)))
    if limit == 0 or not terms:
        return []
    documents = total_length = 0
    frequency = dict.fromkeys(terms, 0)
    for working in sets:
        docs, length, counts = working.keyword_stats(terms)
        documents += docs
        total_length += length
        for term, count in counts.items():
            frequency[term] += count
    if documents == 0:
        return []
    cap = common_cap(documents, len(terms))
    if cap is not None:
        terms = discriminating(terms, cap, lambda term, _: frequency[term])
    weights = {t: idf(documents, frequency[t]) for t in terms if frequency[t]}
    scored: list[tuple[MemoryRecord, float]] = []
    for working in sets:
        scored.extend(working.keyword_search(weights, total_length / documents, limit))
    scored.sort(key=lambda hit: (-hit[1], tie_key(hit[0].id)))
    for record, relevance in scored[:limit]:
        pool.records.setdefault(record.id, record)
        pool.keyword[record.id] = relevance
    return [record.id for record, _ in scored[:limit]]


def turn_hits(
    cold: ColdStore,
    scope: AnyScope,
    query: str,
    limit: int,
    corpus_size: int,
    pool: Pool,
    scope_pk: int | None = None,
    where: FactFilter = VALID_ONLY,
) -> list[int]:
    """Cold ROM keyword search over raw turns (said by ``where``'s point in time, if any)."""
    if limit == 0:
        return []
    said = where.said()
    with cold.read() as session:
        hits = session.search.turns(
            scope, query, limit=limit, corpus_size=corpus_size, scope_pk=scope_pk, said=said
        )
        # A question that matches is often answered by the next turn ("Who played?" →
        # "It was Matt"), which shares none of the words: bring the reply along.
        asked = [turn for turn, _ in hits[:_REPLY_DEPTH] if turn.content.rstrip().endswith("?")]
        replies = session.turns.replies(scope, asked, said=said) if asked else {}
    # Whether a reply is new is decided by this list alone: the pool is shared with the
    # dated-turn search running in another thread, and asking it made the ranking racy.
    ranked: list[int] = []
    for turn, relevance in hits:
        pool.turns[turn.id] = turn
        pool.turn_keyword[turn.id] = relevance
        ranked.append(turn.id)
        reply = replies.get(turn.id)
        if reply is not None and reply.id not in ranked:
            pool.turns[reply.id] = reply
            ranked.append(reply.id)
    return ranked


def dated_turn_hits(
    cold: ColdStore,
    scope: AnyScope,
    query: str,
    limit: int,
    pool: Pool,
    where: FactFilter = VALID_ONLY,
) -> list[int]:
    """Turns said on the dates the question names ("on 13 October 2023"), best match first."""
    named = periods(query)
    if limit == 0 or not named:
        return []
    terms = keyword_terms(query)
    found: dict[int, Turn] = {}
    said = where.said()
    with cold.read() as session:
        for first, last in named:
            start = datetime.combine(first, time.min, tzinfo=UTC)
            end = datetime.combine(last, time.max, tzinfo=UTC)
            for turn in session.turns.said_between(scope, start, end, limit=limit * 4, said=said):
                found[turn.id] = turn
    ranked = sorted(found.values(), key=lambda t: (-overlap(terms, t.content), t.id))[:limit]
    for turn in ranked:
        pool.turns[turn.id] = turn
    return [turn.id for turn in ranked]


def graph_hits(
    sets: Sequence[WorkingSet],
    seeds: Sequence[str],
    query: Vector,
    config: RetrievalConfig,
    pool: Pool,
) -> list[str]:
    """Spreading activation: BFS over shared entities from the best vector hits."""
    if config.max_hops == 0 or config.graph_limit == 0 or not sets:
        return []
    hops: dict[str, int] = {rid: 0 for rid in seeds[: config.graph_seeds]}
    frontier = list(hops)
    found: list[tuple[int, float, str]] = []
    for hop in range(1, config.max_hops + 1):
        entities: set[str] = set()
        for rid in frontier:
            record = pool.records.get(rid)
            if record is not None:
                entities.add(record.entity)
                entities.update(record.related_entities)
        reached: list[str] = []
        for working in sets:
            for rid in working.neighbours(entities, config.graph_max_fanout):
                if rid not in hops:
                    hops[rid] = hop
                    pool.records.setdefault(rid, working.records[rid])
                    reached.append(rid)
        if reached:
            by_id = cosines(sets, query, reached)
            pool.cosine.update(by_id)
            found += [(hop, -by_id.get(rid, 0.0), rid) for rid in reached]
        frontier = reached
        if len(found) >= config.graph_limit * 4 or not frontier:
            break
    found.sort()
    chosen = [rid for _, _, rid in found[: config.graph_limit]]
    pool.hops.update({rid: hops[rid] for rid in chosen})
    return chosen


def cosines(sets: Sequence[WorkingSet], query: Vector, ids: Sequence[str]) -> dict[str, float]:
    """Cosine of the query with each of ``ids`` found in ``sets``."""
    out: dict[str, float] = {}
    q = np.asarray(query, dtype=np.float32)
    for working in sets:
        for rid, vector in working.vectors(ids).items():
            out[rid] = float(vector @ q)
    return out

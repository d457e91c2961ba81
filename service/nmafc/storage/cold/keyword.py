"""Keyword search over facts and turns: FTS5 on SQLite, tsvector + GIN on PostgreSQL.

Both build an OR of the query's content words: an AND query (``plainto_tsquery``) misses
"allergic to peanuts" for "peanut allergy", and recall is what this search is for. Ranking
(bm25 / ts_rank_cd) puts documents matching more terms first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    Table,
    and_,
    bindparam,
    column,
    func,
    literal,
    literal_column,
    or_,
    select,
    table,
    text,
    true,
)
from sqlalchemy.engine import Connection

from nmafc.core.keyword import common_cap, discriminating
from nmafc.core.lifecycle import DECAYED
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import AnyScope, Scope
from nmafc.core.text import keyword_terms
from nmafc.core.turns import Turn
from nmafc.storage.cold.facts_repo import RECORD_COLUMNS, record_from_row
from nmafc.storage.cold.filters import scope_params, where_scope, where_scope_bound
from nmafc.storage.cold.schema import facts, scopes, turns
from nmafc.storage.cold.turns_repo import turn_from_row


@dataclass(frozen=True, slots=True)
class FactFilter:
    """Which fact versions (and, at a point in time, which turns) a search may return.

    The point-in-time rule, one for every source of recall: with ``as_of`` (a turn number)
    a fact version counts if it became valid at or before that turn and was not closed by
    then (``valid_at ≤ as_of < invalid_at``), and a turn counts if its number is at most
    ``as_of``. Turn numbers are per conversation, so an agent-wide search cuts each of the
    agent's conversations at that turn. With ``as_of_time`` the same holds in wall-clock
    time: ``valid_at_time ≤ as_of_time < invalid_at_time`` for a fact version, and a turn
    counts if it was said at or before ``as_of_time`` (``occurred_at ≤ as_of_time``). A
    fact drawn from a turn becomes valid when the turn was said, so the two agree.
    """

    include_invalidated: bool = False
    include_archived: bool = True
    as_of: float | None = None
    as_of_time: datetime | None = None

    @property
    def point_in_time(self) -> bool:
        return self.as_of is not None or self.as_of_time is not None

    def said(self) -> ColumnElement[bool] | None:
        """The turns said by the point in time (None: every turn counts)."""
        if self.as_of is not None:
            return turns.c.turn <= self.as_of
        if self.as_of_time is not None:
            return turns.c.occurred_at <= self.as_of_time
        return None

    def condition(self) -> ColumnElement[bool]:
        """The fact versions this filter admits."""
        if self.as_of is not None:
            return and_(
                facts.c.valid_at <= self.as_of,
                or_(facts.c.invalid_at.is_(None), facts.c.invalid_at > self.as_of),
            )
        if self.as_of_time is not None:
            return and_(
                facts.c.valid_at_time <= self.as_of_time,
                or_(facts.c.invalid_at_time.is_(None), facts.c.invalid_at_time > self.as_of_time),
            )
        if self.include_invalidated:
            # Every version a user would call "a fact", not the closed rows of an edit.
            return or_(facts.c.invalid_reason.is_(None), facts.c.invalid_reason != "superseded")
        if self.include_archived:
            # Decay orders recall but never hides: faded facts stay findable.
            return or_(facts.c.invalid_at.is_(None), facts.c.invalid_reason.in_(sorted(DECAYED)))
        return facts.c.invalid_at.is_(None)


VALID_ONLY = FactFilter(include_archived=False)
# Ranked FTS hits fetched per wanted result, leaving room for versions the filter drops.
_OVERFETCH = 4


class KeywordSearch:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def facts(
        self,
        scope: AnyScope,
        query: str,
        *,
        limit: int = 50,
        where: FactFilter = VALID_ONLY,
        corpus_size: int | None = None,
    ) -> list[tuple[MemoryRecord, float]]:
        """Best-matching fact versions with a relevance score (higher is better).

        ``corpus_size`` (about how many facts the scope holds) lets the search skip terms
        that occur in more than a tenth of them (see ``nmafc.core.keyword.discriminating``).
        """
        terms = keyword_terms(query)
        if not terms:
            return []
        statement, params = self._ranked(
            facts, RECORD_COLUMNS, scope, terms, ("entity", "content"), limit, corpus_size
        )
        rows = self._conn.execute(statement.where(where.condition()), params)
        return [(record_from_row(r), float(r.relevance)) for r in rows]

    def turns(
        self,
        scope: AnyScope,
        query: str,
        *,
        limit: int = 50,
        corpus_size: int | None = None,
        scope_pk: int | None = None,
        said: ColumnElement[bool] | None = None,
    ) -> list[tuple[Turn, float]]:
        """Best-matching stored turns (retracted ones excluded).

        ``scope_pk``, the conversation's row id when the caller has it, saves looking it up;
        ``said`` (:meth:`FactFilter.said`) keeps only the turns said by a point in time.
        """
        terms = keyword_terms(query)
        if not terms:
            return []
        statement, params = self._ranked(
            turns, _TURN_COLUMNS, scope, terms, ("speaker", "content"), limit, corpus_size,
            scope_pk,
        )  # fmt: skip
        if said is not None:
            statement = statement.where(said)
        rows = self._conn.execute(statement, params)
        return [(turn_from_row(r), float(r.relevance)) for r in rows]

    def _ranked(
        self,
        target: Table,
        columns: Sequence[Any],
        scope: AnyScope,
        terms: Sequence[str],
        text_columns: tuple[str, str],
        limit: int,
        corpus_size: int | None = None,
        scope_pk: int | None = None,
    ) -> tuple[Select[Any], dict[str, Any]]:
        """The ranking statement and its parameters."""
        cap = common_cap(corpus_size, len(terms))
        if self._conn.dialect.name == "postgresql":
            search: ColumnElement[Any] = literal_column(f"{target.name}.search")
            if cap is not None:
                terms = discriminating(terms, cap, partial(self._pg_count, target, search, scope))
            query = select(_tsquery(" | ".join(terms)).label("query")).subquery("q")
            relevance = func.ts_rank_cd(search, query.c.query).label("relevance")
            statement = (
                select(*columns, relevance)
                .select_from(target.join(query, true()))
                .where(where_scope(target, scope), search.op("@@")(query.c.query), *_live(target))
                .order_by(relevance.desc(), target.c.id)
                .limit(limit)
            )
            return statement, {}
        fts = table(f"{target.name}_fts", column("rowid"))
        tenant = self._tenant(scope, scope_pk)
        if cap is not None:
            count = partial(self._fts_count, fts.name, tenant, text_columns)
            terms = discriminating(terms, cap, count)
        ranked = _fts_ranked(target, columns, agent_wide=not isinstance(scope, Scope))
        params: dict[str, Any] = {
            **scope_params(scope),
            "fts_query": _fts_query(tenant, terms, text_columns),
            "fts_limit": limit * _OVERFETCH,
            "limit": limit,
        }
        return ranked, params

    def _tenant(self, scope: AnyScope, scope_pk: int | None = None) -> str:
        """The FTS tenant clause: the scope's token (``s<pk>``) or the agent column.

        A stale ``scope_pk`` (the scope purged and re-created meanwhile) can only miss rows:
        the outer query filters by the scope's own columns as well.
        """
        if isinstance(scope, Scope):
            pk = scope_pk
            if pk is None:
                pk = self._conn.execute(
                    select(scopes.c.id).where(where_scope(scopes, scope))
                ).scalar()
            return f"scope : s{pk if pk is not None else 0}"
        return 'agent : "' + scope.agent_id.replace('"', '""') + '"'

    def _fts_count(
        self, fts: str, tenant: str, text_columns: tuple[str, str], term: str, cap: int
    ) -> int:
        counted = text(
            f"SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH :q LIMIT :cap)"
        )
        query = _fts_query(tenant, [term], text_columns)
        return int(self._conn.execute(counted, {"q": query, "cap": cap}).scalar_one())

    def _pg_count(
        self, target: Table, search: ColumnElement[Any], scope: AnyScope, term: str, cap: int
    ) -> int:
        matching = (
            select(literal(1))
            .select_from(target)
            .where(where_scope(target, scope), search.op("@@")(_tsquery(term)))
            .limit(cap)
            .subquery()
        )
        return int(self._conn.execute(select(func.count()).select_from(matching)).scalar_one())


_TURN_COLUMNS = tuple(turns.c)
# Built once per table and kind of scope: constructing these took longer than running them.
_FTS_RANKED: dict[tuple[str, bool], Select[Any]] = {}


def _fts_ranked(target: Table, columns: Sequence[Any], *, agent_wide: bool) -> Select[Any]:
    """SQLite: rank inside the FTS index, then join the best rowids to ``target``.

    Bm25 over the FTS table's own rows is cheap; ranking inside the join cost twice as
    much. Parameters: ``fts_query``, ``fts_limit``, ``limit`` and :func:`scope_params`.
    ``columns`` must be the same for every call with one ``target``.
    """
    key = (target.name, agent_wide)
    cached = _FTS_RANKED.get(key)
    if cached is not None:
        return cached
    fts = table(f"{target.name}_fts", column("rowid"))
    score: ColumnElement[Any] = literal_column(f"-bm25({fts.name}, 0, 0, 0.5, 1.0)")
    match = literal_column(fts.name).op("MATCH")(bindparam("fts_query"))
    ranked = (
        select(fts.c.rowid.label("hit_id"), score.label("relevance"))
        .where(match)
        .order_by(score.desc())
        .limit(bindparam("fts_limit", type_=Integer))
        .subquery("ranked")
    )
    built: Select[Any] = (
        select(*columns, ranked.c.relevance)
        .select_from(target.join(ranked, ranked.c.hit_id == target.c.id))
        .where(where_scope_bound(target, agent_wide=agent_wide), *_live(target))
        .order_by(ranked.c.relevance.desc(), target.c.id)
        .limit(bindparam("limit", type_=Integer))
    )
    _FTS_RANKED[key] = built
    return built


def _live(target: Table) -> tuple[ColumnElement[bool], ...]:
    """Keyword search never ranks rows their table marks retracted (turns).

    Part of the statement as built, so the SQLite one stays cached whole: adding the
    condition per call re-derived the statement's cache key, ≈ 30 µs on every recall.
    """
    return (target.c.retracted.is_(False),) if "retracted" in target.c else ()


def _tsquery(terms: str) -> ColumnElement[Any]:
    return func.to_tsquery(literal_column("'english'::regconfig"), literal(terms))


def _fts_query(tenant: str, terms: Sequence[str], text_columns: tuple[str, str]) -> str:
    """Tenant tokens AND any term: FTS intersects its own indexes instead of post-filtering."""
    any_term = " OR ".join(f'"{t}"' for t in terms)
    return f"{tenant} AND {{{' '.join(text_columns)}}} : ({any_term})"

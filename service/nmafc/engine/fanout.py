"""A list question's fanout: everything said about the people it names, from RAM or the stores.

"Which cities has Jon visited?" is answered by facts said in many sessions, each sharing
little with the question but the name. The fanout ranks every record about, or linking
to, each person the question names by the question with the names taken out (see
:mod:`nmafc.core.aggregate` for which questions), hubs included. A scope whose working
set is in RAM is gathered there; one that is not (the cache is off or too small) by one
entity-prefiltered LanceDB search per person, so both paths give the same list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from nmafc.core.entities import slugify
from nmafc.core.scope import AnyScope
from nmafc.engine.candidates import Pool, Vector, valid_records
from nmafc.index.working_set import WorkingSet
from nmafc.storage.cold import ColdStore
from nmafc.storage.hot.lance import HotStore

# A run of capitalised words, possessive dropped: "Jon's", "New York", "LGBTQ".
_NAME_RUN = re.compile(r"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*(?=(?:['’]s)?\b)")


def question_entities(question: str, known: Callable[[Sequence[str]], set[str]]) -> dict[str, str]:
    """The names the question says ("Jon", "New York") that memory knows: key → name.

    ``known`` tells, of all the candidate keys at once, those some record is about.
    """
    candidates: dict[str, str] = {}
    for run in _NAME_RUN.findall(question):
        words = run.split()
        # The whole run, then each word: "Did Jon" is no entity, "Jon" is.
        for name in [run, *words] if len(words) > 1 else [run]:
            candidates.setdefault(slugify(name), name)
    found = known(list(candidates))
    return {key: name for key, name in candidates.items() if key in found}


def known_in(sets: Sequence[WorkingSet]) -> Callable[[Sequence[str]], set[str]]:
    """Those of some entity keys that a record of ``sets`` is about or links to."""
    return lambda keys: {
        key for key in keys if any(key in ws.linked_from or key in ws.by_entity for ws in sets)
    }


def without_names(question: str, names: Iterable[str]) -> str:
    """The question with ``names`` (and their possessive) taken out: what it asks of them."""
    for name in names:
        question = re.sub(rf"\b{re.escape(name)}(?:['’]s)?\b", " ", question)
    return " ".join(question.split())


def ram_fanout_hits(
    sets: Sequence[WorkingSet], entities: Sequence[str], query: Vector, limit: int, pool: Pool
) -> list[str]:
    """What was said about the question's people, nearest what it asks of them.

    ``query`` embeds the question without its names, so the ranking is by the thing
    asked ("cities visited", "activities") across all of a person's facts, hubs included:
    the whole question's vector is pulled towards the name, which every fact of that
    person shares. Several people ("both") take turns, best first.
    """
    if limit == 0 or not entities:
        return []
    per_entity: list[list[str]] = []
    for entity in entities:
        scored: list[tuple[float, str]] = []
        for working in sets:
            for rid, cosine in working.nearest_about([entity], query, limit):
                record = working.records.get(rid)
                if record is not None:
                    pool.records.setdefault(rid, record)
                    scored.append((cosine, rid))
        scored.sort(key=lambda s: -s[0])
        per_entity.append([rid for _, rid in scored])
    return taking_turns(per_entity, limit)


def store_fanout_hits(
    hot: HotStore,
    cold: ColdStore,
    scope: AnyScope,
    entities: Sequence[str],
    query: Vector,
    limit: int,
    pool: Pool,
) -> list[str]:
    """As :func:`ram_fanout_hits`, by one entity-prefiltered LanceDB search each.

    Each hit's record is checked against the Cold ROM (``candidates.valid_records``).
    """
    if limit == 0 or not entities:
        return []
    nearest = [hot.search_about(scope, entity, query, limit) for entity in entities]
    valid = valid_records(cold, scope, [rid for hits in nearest for rid, _ in hits], pool)
    per_entity = [[rid for rid, _ in hits if rid in valid] for hits in nearest]
    return taking_turns(per_entity, limit)


def taking_turns(per_entity: Sequence[Sequence[str]], limit: int) -> list[str]:
    """Each entity's best, then each one's second best…: ``limit`` distinct ids."""
    chosen: dict[str, None] = {}
    for rank in range(limit):
        for ranked in per_entity:
            if rank < len(ranked):
                chosen.setdefault(ranked[rank], None)
    return list(chosen)[:limit]

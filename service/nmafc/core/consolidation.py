"""The consolidation ("REM") rules: dead-link cleanup and near-duplicate merging."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from nmafc.core.decay import DecayParams, with_expiry
from nmafc.core.lifecycle import InvalidReason, invalidate
from nmafc.core.records import MemoryRecord


def plan_relinks(candidates: Iterable[MemoryRecord], dead_entities: set[str]) -> list[MemoryRecord]:
    """Records linking to entities that have left memory, with those links dropped.

    Only entities that had records and lost them count as dead: a link to something that
    was mentioned but never had a fact of its own still connects the facts that mention it.
    """
    changed: list[MemoryRecord] = []
    for record in candidates:
        kept = tuple(e for e in record.related_entities if e not in dead_entities)
        if kept != record.related_entities:
            changed.append(record.evolve(related_entities=kept))
    return changed


@dataclass(frozen=True, slots=True)
class Merge:
    """One near-duplicate pair resolved: the survivor, strengthened, and the absorbed record."""

    survivor: MemoryRecord
    absorbed: MemoryRecord


def _survivor_first(a: MemoryRecord, b: MemoryRecord) -> tuple[MemoryRecord, MemoryRecord]:
    # The better-established record survives: more reinforced, then more permanent, then older.
    def key(r: MemoryRecord) -> tuple[int, int, float]:
        return (r.k, -_TIER_RANK[r.tier.value], -r.valid_at)

    return (a, b) if key(a) >= key(b) else (b, a)


_TIER_RANK = {"CoreAnchor": 0, "ActiveContext": 1, "EphemeralState": 2}
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _numbers(text: str) -> set[str]:
    return set(_NUMBER.findall(text))


def plan_merges(
    pairs: Iterable[tuple[str, str, float]],
    records: Mapping[str, MemoryRecord],
    threshold: float,
    now: float,
    at_time: datetime,
    params: DecayParams,
) -> list[Merge]:
    """Resolve ``(id_a, id_b, cosine)`` pairs at or above ``threshold``, each record at most once.

    The survivor gains the absorbed record's links and source turns and is reinforced, so a
    fact stated twice ends up stronger than one stated once; the absorbed record is
    invalidated with reason ``merged`` and stays in history.
    """
    used: set[str] = set()
    merges: list[Merge] = []
    for id_a, id_b, cosine in sorted(pairs, key=lambda p: -p[2]):
        if cosine < threshold or id_a == id_b or id_a in used or id_b in used:
            continue
        a, b = records.get(id_a), records.get(id_b)
        if a is None or b is None or not (a.is_valid and b.is_valid):
            continue
        if _numbers(a.content) != _numbers(b.content):
            continue  # "2 dogs" and "3 dogs" embed alike but are different facts
        keep, drop = _survivor_first(a, b)
        links = tuple(dict.fromkeys(keep.related_entities + drop.related_entities))
        turns = tuple(sorted(set(keep.source_turn_ids) | set(drop.source_turn_ids)))
        strengthened = with_expiry(
            keep.evolve(
                related_entities=links,
                source_turn_ids=turns,
                importance=max(keep.importance, drop.importance),
                weight0=1.0,
                k=max(keep.k, drop.k) + 1,
                anchor_turn=now,
            ),
            params,
        )
        merges.append(Merge(strengthened, invalidate(drop, now, at_time, InvalidReason.MERGED)))
        used.update((id_a, id_b))
    return merges

"""What happens to records over their life: reinforcement, invalidation, pruning, promotion.

Every function returns new records; none mutates its input.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from nmafc.core.decay import DecayParams, Expirable, is_prunable, with_expiry
from nmafc.core.records import MemoryRecord
from nmafc.core.tiers import Tier


class InvalidReason(StrEnum):
    """Why a record stopped being valid."""

    OVERRIDE = "override"
    """A newer fact contradicted it."""
    ARCHIVED = "archived"
    """An ActiveContext record decayed to the prune line; still recalled from the archive."""
    EXPIRED = "expired"
    """An EphemeralState record decayed to the prune line."""
    MERGED = "merged"
    """Folded into a near-duplicate survivor during consolidation."""
    SUPERSEDED = "superseded"
    """A newer version of the same record replaced this one (an edit)."""
    DELETED = "deleted"
    """Forgotten on request."""
    ROLLED_BACK = "rolled_back"
    """Created after the turn a rollback returned to."""


# Records that faded rather than being contradicted or removed: still true, only cold.
DECAYED = frozenset({InvalidReason.ARCHIVED.value, InvalidReason.EXPIRED.value})


def is_decayed(record: MemoryRecord) -> bool:
    """True for a record that left the working set by decay (it stays in the archive)."""
    return record.invalid_reason in DECAYED


def reinforce(record: MemoryRecord, now: float, params: DecayParams) -> MemoryRecord:
    """Long-term potentiation: full strength again, one more consolidation, anchored now."""
    return with_expiry(record.evolve(weight0=1.0, k=record.k + 1, anchor_turn=now), params)


def invalidate(
    record: MemoryRecord, at_turn: float, at_time: datetime, reason: InvalidReason
) -> MemoryRecord:
    """The record closed at ``at_turn``; it stays in history, out of default search."""
    return record.evolve(invalid_at=at_turn, invalid_at_time=at_time, invalid_reason=reason.value)


def as_seen_at(
    record: MemoryRecord,
    as_of: float | None,
    as_of_time: datetime | None,
    said: Container[int],
) -> MemoryRecord:
    """The record as memory held it at a point in time (a turn, or an instant).

    A closing after that point had not happened yet, so the record shows as open; and only
    its source turns in ``said`` (those said by then) are kept: a later merge may have
    added turns said afterwards.
    """
    closed_later = record.invalid_at is not None and (
        (as_of is not None and record.invalid_at > as_of)
        or (
            as_of_time is not None
            and (record.invalid_at_time is None or record.invalid_at_time > as_of_time)
        )
    )
    sources = tuple(t for t in record.source_turn_ids if t in said)
    if not closed_later and sources == record.source_turn_ids:
        return record
    if not closed_later:
        return record.evolve(source_turn_ids=sources)
    return record.evolve(
        source_turn_ids=sources, invalid_at=None, invalid_at_time=None, invalid_reason=None
    )


class Expiring(Expirable, Protocol):
    """What deciding a prune reads of a record (a :class:`MemoryRecord` has it all)."""

    @property
    def id(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def entity(self) -> str: ...
    @property
    def tier(self) -> Tier: ...


@dataclass(frozen=True, slots=True)
class Closing:
    """One record version leaving the working set: which, when and why.

    The rest of its state stays as its version row holds it, so a closing is written
    set-based (one statement for thousands) and logged by id (an event's ``closed``).
    """

    id: str
    version: int
    entity: str
    invalid_at: float
    invalid_at_time: datetime
    invalid_reason: str


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """Records leaving the working set, with the right reason."""

    expired: tuple[Closing, ...]
    archived: tuple[Closing, ...]


def plan_prune(candidates: Iterable[Expiring], now: float, at_time: datetime) -> PrunePlan:
    """EphemeralState records that reached the prune line expire; ActiveContext ones archive."""
    expired: list[Closing] = []
    archived: list[Closing] = []
    for record in candidates:
        if not is_prunable(record, now):
            continue
        if record.tier is Tier.EPHEMERAL_STATE:
            reason, into = InvalidReason.EXPIRED, expired
        else:
            reason, into = InvalidReason.ARCHIVED, archived
        into.append(Closing(record.id, record.version, record.entity, now, at_time, reason.value))
    return PrunePlan(tuple(expired), tuple(archived))


def promote(record: MemoryRecord, params: DecayParams) -> MemoryRecord:
    """An often-recalled ActiveContext record becomes a permanent CoreAnchor."""
    return with_expiry(record.evolve(tier=Tier.CORE_ANCHOR), params)


def plan_promotions(
    candidates: Iterable[MemoryRecord], promote_k: int, params: DecayParams
) -> list[MemoryRecord]:
    """ActiveContext records reinforced at least ``promote_k`` times, promoted."""
    return [
        promote(r, params)
        for r in candidates
        if r.is_valid and r.tier is Tier.ACTIVE_CONTEXT and r.k >= promote_k
    ]

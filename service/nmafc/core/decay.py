"""Ebbinghaus decay with consolidation: weight is a function of the clock, never stored per turn.

    w(t)  = weight0 · exp(−λ_eff · (t − anchor_turn))
    λ_eff = λ_tier · exp(−η · k)

A record is pruned once w ≤ w_prune, which happens at
``expires_turn = anchor_turn + ln(weight0 / w_prune) / λ_eff``; storing that turn turns
pruning into an indexed range query.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from nmafc.core.records import MemoryRecord
from nmafc.core.tiers import Tier


def _default_lambdas() -> dict[Tier, float]:
    return {Tier.CORE_ANCHOR: 0.0, Tier.ACTIVE_CONTEXT: 0.005, Tier.EPHEMERAL_STATE: 0.69}


@dataclass(frozen=True, slots=True)
class DecayParams:
    """Decay constants; every one is a setting (``NMAFC_DECAY_*``)."""

    lambdas: Mapping[Tier, float] = field(default_factory=_default_lambdas)
    eta: float = 0.15
    w_prune: float = 0.1

    def __post_init__(self) -> None:
        if self.w_prune <= 0 or self.w_prune >= 1:
            raise ValueError("w_prune must be in (0, 1)")
        if any(lam < 0 for lam in self.lambdas.values()):
            raise ValueError("decay rates must be ≥ 0")


def effective_lambda(params: DecayParams, tier: Tier, k: int) -> float:
    """λ_eff = λ_tier · exp(−η·k): every reinforcement slows forgetting."""
    return params.lambdas[tier] * math.exp(-params.eta * k)


def weight_at(record: MemoryRecord, now: float, params: DecayParams) -> float:
    """The record's weight at clock ``now``. Invalidated records keep their weight frozen."""
    at = now if record.invalid_at is None else min(now, record.invalid_at)
    return decayed_weight(record.weight0, record.anchor_turn, record.tier, record.k, at, params)


def decayed_weight(
    weight0: float, anchor_turn: float, tier: Tier, k: int, now: float, params: DecayParams
) -> float:
    """Weight ``weight0`` set at ``anchor_turn``, decayed to clock ``now``."""
    elapsed = max(0.0, now - anchor_turn)
    return weight0 * math.exp(-effective_lambda(params, tier, k) * elapsed)


def expires_turn(
    weight0: float, anchor_turn: float, tier: Tier, k: int, params: DecayParams
) -> float:
    """The clock value at which weight reaches ``w_prune``; ``inf`` when it never decays."""
    lam = effective_lambda(params, tier, k)
    if lam == 0.0:
        return math.inf
    if weight0 <= params.w_prune:
        return anchor_turn
    return anchor_turn + math.log(weight0 / params.w_prune) / lam


def with_expiry(record: MemoryRecord, params: DecayParams) -> MemoryRecord:
    """The record with ``expires_turn`` recomputed from its current fields."""
    return record.evolve(
        expires_turn=expires_turn(record.weight0, record.anchor_turn, record.tier, record.k, params)
    )


class Expirable(Protocol):
    """What the prune line reads of a record (a :class:`MemoryRecord` has it)."""

    @property
    def expires_turn(self) -> float: ...
    @property
    def is_valid(self) -> bool: ...


def is_prunable(record: Expirable, now: float) -> bool:
    """True once the record's weight has decayed to ``w_prune`` (valid records only)."""
    return record.is_valid and record.expires_turn <= now

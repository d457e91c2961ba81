"""Decay follows w(t) = w0·exp(−λ_tier·e^(−ηk)·Δt); values pinned from the formula itself."""

import math

import pytest

from nmafc.core.decay import DecayParams, effective_lambda, expires_turn, is_prunable, weight_at
from nmafc.core.lifecycle import InvalidReason, invalidate
from nmafc.core.tiers import Tier

from .factories import T0, record

PARAMS = DecayParams()


def test_active_context_unreinforced_after_200_turns_is_one_over_e() -> None:
    r = record(tier=Tier.ACTIVE_CONTEXT, k=0, anchor_turn=0)
    assert weight_at(r, 200, PARAMS) == pytest.approx(math.exp(-1), abs=1e-12)
    assert weight_at(r, 200, PARAMS) == pytest.approx(0.368, abs=5e-4)


def test_active_context_reinforced_ten_times_keeps_eighty_percent_after_200_turns() -> None:
    r = record(tier=Tier.ACTIVE_CONTEXT, k=10, anchor_turn=0)
    assert weight_at(r, 200, PARAMS) == pytest.approx(0.800, abs=5e-4)


def test_ephemeral_reinforced_ten_times_after_ten_turns_is_0_215_not_the_seed_tables_0_314() -> (
    None
):
    r = record(tier=Tier.EPHEMERAL_STATE, k=10, anchor_turn=0)
    assert weight_at(r, 10, PARAMS) == pytest.approx(0.2145, abs=5e-4)


def test_active_context_expires_460_5_turns_after_its_anchor() -> None:
    assert expires_turn(1.0, 40.0, Tier.ACTIVE_CONTEXT, 0, PARAMS) == pytest.approx(
        40 + math.log(10) / 0.005
    )
    assert expires_turn(1.0, 0.0, Tier.ACTIVE_CONTEXT, 0, PARAMS) == pytest.approx(
        460.517, abs=1e-3
    )


def test_core_anchor_never_decays_or_expires() -> None:
    r = record(tier=Tier.CORE_ANCHOR, anchor_turn=0)
    assert weight_at(r, 1_000_000, PARAMS) == 1.0
    assert r.expires_turn == math.inf
    assert not is_prunable(r, 1e12)


def test_each_reinforcement_slows_decay_by_exp_minus_eta() -> None:
    ratio = effective_lambda(PARAMS, Tier.ACTIVE_CONTEXT, 3) / effective_lambda(
        PARAMS, Tier.ACTIVE_CONTEXT, 2
    )
    assert ratio == pytest.approx(math.exp(-0.15))


def test_weight_reaches_the_prune_line_exactly_at_expires_turn() -> None:
    r = record(tier=Tier.EPHEMERAL_STATE, anchor_turn=7)
    assert weight_at(r, r.expires_turn, PARAMS) == pytest.approx(PARAMS.w_prune)
    assert not is_prunable(r, r.expires_turn - 1e-6)
    assert is_prunable(r, r.expires_turn)


def test_weight_is_frozen_once_a_record_is_invalidated() -> None:
    r = invalidate(record(anchor_turn=0), 100, T0, InvalidReason.OVERRIDE)
    assert weight_at(r, 100, PARAMS) == weight_at(r, 5000, PARAMS)


def test_constants_are_configurable() -> None:
    fast = DecayParams(lambdas={t: 1.0 for t in Tier}, eta=0.0, w_prune=0.5)
    r = record(tier=Tier.CORE_ANCHOR, anchor_turn=0)
    assert weight_at(r, 1, fast) == pytest.approx(math.exp(-1))
    assert expires_turn(1.0, 0.0, Tier.CORE_ANCHOR, 0, fast) == pytest.approx(math.log(2))


def test_prune_threshold_outside_zero_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="w_prune"):
        DecayParams(w_prune=1.5)

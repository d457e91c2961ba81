"""Reinforcement, invalidation, pruning and promotion as pure functions."""

import math
from datetime import timedelta

import pytest

from nmafc.core.decay import DecayParams
from nmafc.core.lifecycle import (
    InvalidReason,
    as_seen_at,
    invalidate,
    plan_promotions,
    plan_prune,
    reinforce,
)
from nmafc.core.tiers import Tier

from .factories import T0, record

PARAMS = DecayParams()


def test_reinforcement_resets_weight_counts_and_reanchors() -> None:
    r = record(weight0=0.4, k=2, anchor_turn=10)
    strengthened = reinforce(r, 90, PARAMS)
    assert (strengthened.weight0, strengthened.k, strengthened.anchor_turn) == (1.0, 3, 90)
    assert strengthened.expires_turn == pytest.approx(
        90 + math.log(10) / (0.005 * math.exp(-0.15 * 3))
    )
    assert r.k == 2  # the input is untouched


def test_invalidated_record_stays_readable_with_its_window() -> None:
    r = invalidate(record(valid_at=3), 9, T0, InvalidReason.OVERRIDE)
    assert not r.is_valid
    assert (r.valid_at, r.invalid_at, r.invalid_reason) == (3, 9, "override")


def test_prune_expires_ephemeral_and_archives_active_but_keeps_core() -> None:
    mood = record(tier=Tier.EPHEMERAL_STATE, anchor_turn=0)
    goal = record(tier=Tier.ACTIVE_CONTEXT, anchor_turn=0)
    name = record(tier=Tier.CORE_ANCHOR, anchor_turn=0)
    plan = plan_prune([mood, goal, name], now=500, at_time=T0)
    assert [r.id for r in plan.expired] == [mood.id]
    assert [r.id for r in plan.archived] == [goal.id]
    assert plan.expired[0].invalid_reason == "expired"
    assert plan.archived[0].invalid_reason == "archived"
    assert plan.archived[0].invalid_at == 500


def test_prune_leaves_records_above_the_line() -> None:
    goal = record(tier=Tier.ACTIVE_CONTEXT, anchor_turn=0)
    assert plan_prune([goal], now=400, at_time=T0).archived == ()


def test_promotion_needs_ten_reinforcements_and_only_lifts_active_context() -> None:
    often = record(tier=Tier.ACTIVE_CONTEXT, k=10)
    seldom = record(tier=Tier.ACTIVE_CONTEXT, k=9)
    mood = record(tier=Tier.EPHEMERAL_STATE, k=12)
    promoted = plan_promotions([often, seldom, mood], promote_k=10, params=PARAMS)
    assert [r.id for r in promoted] == [often.id]
    assert promoted[0].tier is Tier.CORE_ANCHOR
    assert promoted[0].expires_turn == math.inf


def test_a_record_seen_at_a_point_before_its_closing_shows_as_open() -> None:
    closed = invalidate(record(valid_at=1.0), 5.0, T0 + timedelta(days=3), InvalidReason.OVERRIDE)
    then = as_seen_at(closed, 3.0, None, said=set())
    assert (then.invalid_at, then.invalid_at_time, then.invalid_reason) == (None, None, None)
    assert as_seen_at(closed, None, T0 + timedelta(days=1), said=set()).invalid_at is None
    at_the_closing = as_seen_at(closed, 5.0, None, said=set())
    assert at_the_closing.invalid_reason == "override"  # it was closed by then


def test_a_record_seen_at_a_point_keeps_only_the_source_turns_said_by_then() -> None:
    merged = record(source_turn_ids=(3, 8, 12))
    assert as_seen_at(merged, 9.0, None, said={3, 8}).source_turn_ids == (3, 8)
    assert as_seen_at(merged, 20.0, None, said={3, 8, 12}) is merged  # nothing to undo

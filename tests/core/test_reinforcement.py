"""Reinforcement on use: the relevance rule and the spacing rule, on plain values."""

from __future__ import annotations

import math

import pytest

from nmafc.core.decay import DecayParams, weight_at
from nmafc.core.reinforcement import UseRule, due, strengthen, used
from nmafc.core.tiers import Tier

from .factories import record

RULE = UseRule(min_cosine=0.3, relative_to_best=0.6, max_used=3, min_spacing=1.0)
PARAMS = DecayParams()


def test_rendered_facts_about_as_close_as_the_best_hit_are_used() -> None:
    cosine = {"marathon": 0.63, "ran": 0.42, "shoes": 0.32, "mood": 0.19, "chatter": 0.07}
    # The floor is max(0.3, 0.6 × 0.63) = 0.378.
    assert used(["marathon", "ran", "shoes", "mood", "chatter"], cosine, RULE) == [
        "marathon",
        "ran",
    ]


def test_at_most_max_used_facts_count_the_first_in_rank_order() -> None:
    # A question naming a person lifts every fact about them to within the floors.
    cosine = {"e": 0.55, "d": 0.6, "c": 0.58, "b": 0.57, "a": 0.56}
    assert used(["e", "d", "c", "b", "a"], cosine, RULE) == ["e", "d", "c"]
    assert used(["e", "d", "c"], cosine, UseRule(max_used=1)) == ["e"]


def test_in_a_scope_where_nothing_is_about_the_question_nothing_is_used() -> None:
    # The best of a bad lot is still below the absolute floor.
    assert used(["a", "b"], {"a": 0.25, "b": 0.2}, RULE) == []


def test_a_fact_that_was_not_rendered_is_never_used() -> None:
    cosine = {"shown": 0.5, "left_out": 0.7}
    assert used(["shown"], cosine, RULE) == ["shown"]


def test_the_best_hit_sets_the_floor_even_when_it_was_not_rendered() -> None:
    assert used(["b"], {"a": 0.9, "b": 0.5}, RULE) == []


def test_a_rendered_fact_without_a_cosine_is_not_used_and_each_counts_once() -> None:
    assert used(["a", "unknown", "a"], {"a": 0.5}, RULE) == ["a"]
    assert used(["a"], {}, RULE) == []


def test_a_fact_used_again_within_the_spacing_is_left_as_it_is() -> None:
    fact = record(k=2, anchor_turn=10.0, weight0=1.0)
    assert strengthen(fact, 10.0, PARAMS, RULE) is None
    assert strengthen(fact, 10.5, PARAMS, RULE) is None
    assert not due(fact, 10.99, RULE)


def test_a_fact_used_after_the_spacing_is_strengthened_once() -> None:
    fact = record(k=2, anchor_turn=10.0, weight0=1.0, tier=Tier.ACTIVE_CONTEXT)
    later = strengthen(fact, 40.0, PARAMS, RULE)
    assert later is not None
    assert (later.k, later.weight0, later.anchor_turn) == (3, 1.0, 40.0)
    assert later.expires_turn == pytest.approx(40.0 + math.log(10) / (0.005 * math.exp(-0.45)))
    assert strengthen(later, 40.0, PARAMS, RULE) is None  # the same turn: counted already


def test_a_fact_never_reinforced_counts_once_at_the_turn_it_was_learnt() -> None:
    learnt = record(k=0, anchor_turn=5.0)
    first = strengthen(learnt, 5.0, PARAMS, RULE)
    assert first is not None
    assert first.k == 1
    assert strengthen(first, 5.0, PARAMS, RULE) is None


def test_spacing_zero_counts_every_use_and_spacing_is_in_clock_units() -> None:
    fact = record(k=3, anchor_turn=7.0)
    every = UseRule(min_spacing=0.0)
    assert strengthen(fact, 7.0, PARAMS, every) is not None
    hourly = UseRule(min_spacing=0.25)  # a quarter of a turn, or of an hour
    assert strengthen(fact, 7.2, PARAMS, hourly) is None
    assert strengthen(fact, 7.25, PARAMS, hourly) is not None


def test_an_unused_mood_keeps_decaying() -> None:
    mood = record(tier=Tier.EPHEMERAL_STATE, anchor_turn=0.0, k=0)
    # Not used: nothing is written, so its weight is what decay makes of it.
    assert used(["mood"], {"marathon": 0.63, "mood": 0.19}, RULE) == []
    assert weight_at(mood, 2.0, PARAMS) == pytest.approx(math.exp(-0.69 * 2))


@pytest.mark.parametrize(
    ("field", "value"),
    [("relative_to_best", 1.5), ("relative_to_best", -0.1), ("max_used", 0), ("min_spacing", -1)],
)
def test_a_rule_out_of_range_is_refused(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        UseRule(**{field: value})

"""Tier rules and single-valued attribute slots."""

import pytest

from nmafc.core.extraction.rules import slot_for, tier_for
from nmafc.core.tiers import Tier


@pytest.mark.parametrize(
    ("sentence", "has_time", "tier"),
    [
        ("My husband is a pilot.", False, Tier.CORE_ANCHOR),
        ("I'm allergic to peanuts.", False, Tier.CORE_ANCHOR),
        ("I love painting landscapes.", False, Tier.CORE_ANCHOR),
        ("I went to a support group yesterday.", True, Tier.CORE_ANCHOR),
        ("We're thinking about going camping next month.", True, Tier.ACTIVE_CONTEXT),
        ("I'm training for a marathon.", False, Tier.ACTIVE_CONTEXT),
        ("I'm so tired.", False, Tier.EPHEMERAL_STATE),
        ("I'm excited about the new job because it pays well.", False, Tier.ACTIVE_CONTEXT),
        ("The weather was nice.", False, Tier.ACTIVE_CONTEXT),
    ],
)
def test_tiers(sentence: str, has_time: bool, tier: Tier) -> None:
    assert tier_for(sentence, has_time=has_time) is tier


@pytest.mark.parametrize(
    ("sentence", "slot"),
    [
        ("I live in Paris.", "lives_in"),
        ("I just moved to Berlin!", "lives_in"),
        ("I work at a robotics startup.", "works_at"),
        ("I got a new job at Google.", "works_at"),
        ("My name is Sam.", "name"),
        ("I'm single again.", "relationship_status"),
        ("My favorite band is Muse.", "favourite_band"),
        ("I went to Paris.", None),
    ],
)
def test_slots(sentence: str, slot: str | None) -> None:
    assert slot_for(sentence) == slot

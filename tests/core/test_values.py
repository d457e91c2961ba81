"""Identifiers, tiers and messages reject bad input with errors that name the fix."""

import pytest

from nmafc.core.scope import AgentScope, Scope
from nmafc.core.tiers import Tier, parse_tier
from nmafc.core.turns import Message, validate_messages
from nmafc.errors import EmptyMessages, InvalidScope, UnknownTier


def test_tiers_parse_case_insensitively_and_unknown_names_fail_with_the_valid_list() -> None:
    assert parse_tier("coreanchor") is Tier.CORE_ANCHOR
    with pytest.raises(UnknownTier) as caught:
        parse_tier("Permanent")
    assert "CoreAnchor" in str(caught.value)
    assert caught.value.status == 422


@pytest.mark.parametrize("bad", ["", "has space", "quote'", "x" * 129, "semi;colon"])
def test_scope_ids_are_restricted_to_a_safe_alphabet(bad: str) -> None:
    with pytest.raises(InvalidScope, match="X-Agent-ID"):
        Scope(bad, "c")
    with pytest.raises(InvalidScope):
        AgentScope(bad)


def test_empty_message_lists_and_blank_messages_are_rejected() -> None:
    with pytest.raises(EmptyMessages, match="at least one message"):
        validate_messages([])
    with pytest.raises(EmptyMessages, match="Message 1"):
        validate_messages([Message("hi"), Message("   ")])
    validate_messages([Message("", captions=("a photo of a dog",))])

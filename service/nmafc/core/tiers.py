"""The three memory tiers and how a caller names them."""

from __future__ import annotations

from enum import StrEnum

from nmafc.errors import UnknownTier


class Tier(StrEnum):
    """How long a fact is meant to live."""

    CORE_ANCHOR = "CoreAnchor"
    ACTIVE_CONTEXT = "ActiveContext"
    EPHEMERAL_STATE = "EphemeralState"


_BY_VALUE = {tier.value: tier for tier in Tier}


def parse_tier(value: str | Tier) -> Tier:
    """Return the tier named by ``value`` or raise :class:`UnknownTier`."""
    if isinstance(value, Tier):
        return value
    exact = _BY_VALUE.get(value)
    if exact is not None:  # stored tiers are exact: spare the loop over every stored record
        return exact
    for tier in Tier:
        if value == tier.value or value.lower() == tier.value.lower():
            return tier
    raise UnknownTier(f"{value!r} is not a memory tier.")

"""A scope is one agent's one conversation: the unit every read and write is filtered by."""

from __future__ import annotations

import re
from dataclasses import dataclass

from nmafc.errors import InvalidScope

_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:@-]{1,128}$")


def validate_id(value: str, what: str) -> str:
    """Return ``value`` if it is a safe identifier, else raise :class:`InvalidScope`."""
    if not isinstance(value, str) or not _ID_PATTERN.match(value):
        raise InvalidScope(f"{what} {value!r} is not a valid identifier.")
    return value


@dataclass(frozen=True, slots=True)
class Scope:
    """``(agent_id, conversation_id)``; identifiers are validated on construction."""

    agent_id: str
    conversation_id: str

    def __post_init__(self) -> None:
        validate_id(self.agent_id, "agent_id")
        validate_id(self.conversation_id, "conversation_id")

    def __str__(self) -> str:
        return f"{self.agent_id}/{self.conversation_id}"


@dataclass(frozen=True, slots=True)
class AgentScope:
    """Every conversation of one agent: the widest reach a read can have."""

    agent_id: str

    def __post_init__(self) -> None:
        validate_id(self.agent_id, "agent_id")

    def __str__(self) -> str:
        return f"{self.agent_id}/*"


@dataclass(frozen=True, slots=True)
class AllAgents:
    """The deliberate, admin-only reach over every agent (API key administration)."""

    def __str__(self) -> str:
        return "*"


AnyScope = Scope | AgentScope
KeyOwner = AgentScope | AllAgents

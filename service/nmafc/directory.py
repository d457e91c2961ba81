"""The scope directory: which agents and conversations hold memory (the dashboard's picker).

Beside the layers, like ``auth.py``: one read of the Cold ROM's ``scopes`` table, per
agent. Listing every agent is for admin keys and an open service only; it is the same
deliberate cross-tenant read that start-up recovery makes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nmafc.core.scope import AgentScope
from nmafc.storage.cold import ColdStore


@dataclass(frozen=True, slots=True)
class Conversation:
    agent_id: str
    conversation_id: str
    turn: float


def conversations(
    cold: ColdStore, agents: Sequence[str] | None, limit: int
) -> tuple[list[Conversation], bool]:
    """The conversations of ``agents`` (None: every agent), and whether ``limit`` cut them."""
    found: list[Conversation] = []
    with cold.read() as session:
        names = sorted(session.scopes.agents()) if agents is None else list(agents)
        for agent in names:
            found += [
                Conversation(row.scope.agent_id, row.scope.conversation_id, row.turn)
                for row in session.scopes.of(AgentScope(agent))
            ]
            if len(found) > limit:
                break
    return found[:limit], len(found) > limit

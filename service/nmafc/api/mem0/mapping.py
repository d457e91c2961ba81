"""How Mem0's entities and shapes map onto NMAFC's tenancy and records.

- The NMAFC key decides the agent. Mem0's ``agent_id``, when given, must be that agent (an
  admin key names the agent with it); it never widens what the key reaches.
- ``user_id`` and ``run_id`` name the conversation: ``user_id`` → ``<user_id>``, ``run_id``
  → ``run:<run_id>``, both → ``<user_id>:run:<run_id>``; neither → ``default``.
- A filter that names only the agent (or ``user_id: "*"``) reaches every conversation.

Parameters NMAFC cannot honour raise :class:`UnsupportedParameter` naming them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from nmafc.auth import Principal
from nmafc.core.scope import validate_id
from nmafc.errors import AgentNotReachable, InvalidInput, UnsupportedParameter
from nmafc.wire import Memory, MemoryHistory

ENTITIES = ("user_id", "agent_id", "run_id")
RUN = ":run:"


@dataclass(frozen=True, slots=True)
class Target:
    """One selection: a conversation, or (``conversation is None``) the whole agent."""

    conversation: str | None


def conversation_of(user_id: str | None, run_id: str | None) -> str:
    """The NMAFC conversation for a Mem0 ``user_id`` / ``run_id`` pair."""
    if user_id and run_id:
        name = f"{user_id}{RUN}{run_id}"
    elif run_id:
        name = f"run:{run_id}"
    else:
        name = user_id or "default"
    return validate_id(name, "user_id/run_id")


def entities_of(conversation: str) -> dict[str, str | None]:
    """The Mem0 ``user_id`` / ``run_id`` a conversation was named from."""
    if conversation.startswith("run:"):
        return {"user_id": None, "run_id": conversation[4:]}
    user, sep, run = conversation.partition(RUN)
    return {"user_id": user, "run_id": run if sep else None}


def agent_for(principal: Principal, agent_id: Any) -> str:
    """The agent a Mem0 request acts for: the key's own; ``agent_id`` may only confirm it."""
    if agent_id is not None and not isinstance(agent_id, str):
        raise InvalidInput("`agent_id` must be a string.")
    if principal.is_admin:
        if agent_id is None:
            raise InvalidInput(
                "An admin key must name the agent.",
                fix="Pass agent_id (in filters, or as a parameter) with an admin key.",
            )
        return validate_id(agent_id, "agent_id")
    if agent_id is not None and agent_id != principal.agent_id:
        raise AgentNotReachable(f"This key cannot reach agent_id {agent_id!r}.")
    assert principal.agent_id is not None
    return principal.agent_id


def refuse(given: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    """Raise for the first parameter NMAFC does not honour (nulls count as absent)."""
    known = set(allowed)
    for name, value in given.items():
        if name not in known and value is not None:
            raise UnsupportedParameter(
                f"The Mem0 parameter `{name}` is not supported by NMAFC ({where}).",
                fix=f"Drop `{name}`; {where} accepts: {', '.join(sorted(known))} "
                "(see docs/integrations.md).",
            )


def _entity_filter(clause: Mapping[str, Any], where: str) -> dict[str, Any]:
    refuse(clause, ENTITIES, f"{where} filters")
    for name, value in clause.items():
        if value is not None and not isinstance(value, str):
            raise UnsupportedParameter(
                f"The filter on `{name}` must be a plain id ({where}), not {value!r}.",
                fix=f'Filter by equality, e.g. {{"{name}": "alice"}}; operators are not supported.',
            )
    return {k: v for k, v in clause.items() if v is not None}


def _selection(clause: Mapping[str, Any], where: str) -> tuple[str | None, Target]:
    """One AND-ed group of entity equalities → (agent named, target)."""
    found = _entity_filter(clause, where)
    user, run = found.get("user_id"), found.get("run_id")
    if user == "*":
        user = None
        if run is None:
            return found.get("agent_id"), Target(None)
    if user is None and run is None:
        return found.get("agent_id"), Target(None)
    return found.get("agent_id"), Target(conversation_of(user, run))


def parse_filters(filters: Any, where: str) -> tuple[str | None, list[Target]]:
    """Mem0 ``filters`` (entity equalities under ``AND`` / ``OR``) → agent named, targets."""
    if filters is None:
        return None, [Target(conversation_of(None, None))]
    if not isinstance(filters, Mapping):
        raise InvalidInput("`filters` must be an object.")
    if "OR" in filters:
        refuse(filters, ["OR"], f"{where} filters")
        groups = filters["OR"]
        if not isinstance(groups, list) or not groups:
            raise InvalidInput("`OR` must be a non-empty list of filters.")
        picked = [_group(g, where) for g in groups]
        agents = {a for a, _ in picked if a is not None}
        if len(agents) > 1:
            raise UnsupportedParameter(
                "An `OR` over two agents is not supported: one key reaches one agent.",
                fix="Filter on one agent_id.",
            )
        return (agents.pop() if agents else None), [t for _, t in picked]
    agent, target = _group(filters, where)
    return agent, [target]


def _group(clause: Any, where: str) -> tuple[str | None, Target]:
    if not isinstance(clause, Mapping):
        raise InvalidInput("Each filter must be an object.")
    if "AND" in clause:
        refuse(clause, ["AND"], f"{where} filters")
        parts = clause["AND"]
        if not isinstance(parts, list) or not all(isinstance(p, Mapping) for p in parts):
            raise InvalidInput("`AND` must be a list of filters.")
        merged: dict[str, Any] = {}
        for part in parts:
            for name, value in _entity_filter(part, where).items():
                if merged.get(name, value) != value:
                    raise UnsupportedParameter(
                        f"`AND` gives `{name}` two values; it would match nothing.",
                        fix=f"Give `{name}` one value, or use `OR`.",
                    )
                merged[name] = value
        return _selection(merged, where)
    if "OR" in clause:
        raise UnsupportedParameter(
            "An `OR` nested inside another filter is not supported.",
            fix="Put `OR` at the top level of `filters`.",
        )
    return _selection(clause, where)


def memory_json(m: Memory, score: float | None = None) -> dict[str, Any]:
    """An NMAFC memory as Mem0's SDK returns one."""
    entities = entities_of(m.conversation_id)
    out: dict[str, Any] = {
        "id": m.id,
        "memory": m.content,
        "user_id": entities["user_id"],
        "agent_id": m.agent_id,
        "run_id": entities["run_id"],
        "app_id": None,
        "hash": None,
        "metadata": None,
        "categories": [m.tier],
        "immutable": False,
        "expiration_date": None,
        "created_at": _iso(m.valid_at_time),
        "updated_at": _iso(m.created_at),
    }
    if score is not None:
        out["score"] = score
    return out


def history_json(h: MemoryHistory) -> list[dict[str, Any]]:
    """Every version as Mem0's history entries: ADD, then UPDATE per edit, DELETE if gone."""
    entries: list[dict[str, Any]] = []
    previous: Memory | None = None
    for version in h.versions:
        entities = entities_of(version.conversation_id)
        event = "ADD" if previous is None else "UPDATE"
        if previous is not None and previous.content == version.content:
            event = "UPDATE" if version.valid else "DELETE"
        entries.append(
            {
                "id": f"{version.id}:{version.version}",
                "memory_id": version.id,
                "input": None,
                "old_memory": previous.content if previous else None,
                "new_memory": version.content if event != "DELETE" else None,
                "event": event,
                "metadata": None,
                "user_id": entities["user_id"],
                "agent_id": version.agent_id,
                "run_id": entities["run_id"],
                "created_at": _iso(version.created_at),
                "updated_at": _iso(version.created_at),
            }
        )
        previous = version
    if previous is not None and not previous.valid and entries[-1]["event"] != "DELETE":
        entries.append({**entries[-1], "event": "DELETE", "old_memory": previous.content})
        entries[-1]["new_memory"] = None
        entries[-1]["id"] = f"{previous.id}:deleted"
    return entries


def _iso(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None

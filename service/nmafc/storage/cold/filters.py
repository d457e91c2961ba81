"""The one place tenant filters are built: every Cold query goes through these functions."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Table, and_, bindparam, true

from nmafc.core.scope import AgentScope, AllAgents, AnyScope, KeyOwner, Scope


def where_scope(table: Table, scope: AnyScope) -> ColumnElement[bool]:
    """``agent_id = …`` (and ``conversation_id = …`` for a conversation scope)."""
    if isinstance(scope, Scope):
        return and_(
            table.c.agent_id == scope.agent_id, table.c.conversation_id == scope.conversation_id
        )
    if isinstance(scope, AgentScope):
        return table.c.agent_id == scope.agent_id
    raise TypeError(f"not a scope: {scope!r}")


def where_scope_bound(table: Table, *, agent_wide: bool = False) -> ColumnElement[bool]:
    """:func:`where_scope` with bound values: for statements built once per kind of scope.

    Execute with :func:`scope_params` of a conversation, or with ``agent_wide`` of an
    agent's reach.
    """
    agent = table.c.agent_id == bindparam("scope_agent_id")
    if agent_wide:
        return agent
    return and_(agent, table.c.conversation_id == bindparam("scope_conversation_id"))


def scope_params(scope: AnyScope) -> dict[str, str]:
    """The values of :func:`where_scope_bound` for ``scope``."""
    if isinstance(scope, Scope):
        return {"scope_agent_id": scope.agent_id, "scope_conversation_id": scope.conversation_id}
    if isinstance(scope, AgentScope):
        return {"scope_agent_id": scope.agent_id}
    raise TypeError(f"not a scope: {scope!r}")


def where_owner(table: Table, owner: KeyOwner) -> ColumnElement[bool]:
    """API keys an owner may see: one agent's, or every key for the explicit admin reach."""
    if isinstance(owner, AgentScope):
        return table.c.agent_id == owner.agent_id
    if isinstance(owner, AllAgents):
        return true()
    raise TypeError(f"not a key owner: {owner!r}")

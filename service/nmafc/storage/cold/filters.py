"""The one place tenant filters are built: every Cold query goes through ``where_scope``."""

from __future__ import annotations

from sqlalchemy import ColumnElement, Table, and_

from nmafc.core.scope import AgentScope, AnyScope, Scope


def where_scope(table: Table, scope: AnyScope) -> ColumnElement[bool]:
    """``agent_id = …`` (and ``conversation_id = …`` for a conversation scope)."""
    if isinstance(scope, Scope):
        return and_(
            table.c.agent_id == scope.agent_id, table.c.conversation_id == scope.conversation_id
        )
    if isinstance(scope, AgentScope):
        return table.c.agent_id == scope.agent_id
    raise TypeError(f"not a scope: {scope!r}")

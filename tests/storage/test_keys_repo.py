"""API keys in the Cold ROM: hashed, owned by one agent, never reachable across agents."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import event, select

from nmafc.auth import KeyAdmin, hash_secret
from nmafc.core.scope import AgentScope, AllAgents
from nmafc.errors import Conflict, NotFound
from nmafc.storage.cold import ColdStore
from nmafc.storage.cold.schema import api_keys


@pytest.fixture
def cold(cold_uri: str):  # type: ignore[no-untyped-def]
    store = ColdStore.open(cold_uri)
    yield store
    store.close()


def test_every_statement_on_api_keys_is_bound_to_an_owner_or_a_hash(cold: ColdStore) -> None:
    statements: list[str] = []

    @event.listens_for(cold.engine, "before_cursor_execute")
    def _capture(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        statements.append(" ".join(statement.split()))

    keys = KeyAdmin(cold)
    a = keys.create(agent_id="agent-a")
    keys.create(agent_id="agent-b")
    keys.owned(AgentScope("agent-a"), include_revoked=True)
    keys.revoke(AgentScope("agent-a"), a.row.prefix)
    with cold.read() as session:
        session.keys.active_by_hash(hash_secret(a.secret, keys._current_pepper()))

    on_keys = [s for s in statements if re.search(r"\b(FROM|INTO|UPDATE)\s+api_keys\b", s, re.I)]
    assert len(on_keys) >= 6
    loose = [
        s
        for s in on_keys
        if not s.upper().startswith("INSERT")
        and not re.search(r"api_keys\.(agent_id|key_hash|id)\s*=", s)
    ]
    assert loose == []


def test_an_agent_neither_sees_nor_revokes_another_agents_keys(cold: ColdStore) -> None:
    keys = KeyAdmin(cold)
    a = keys.create(agent_id="agent-a", name="a's")
    b = keys.create(agent_id="agent-b", name="b's")
    assert [k.id for k in keys.owned(AgentScope("agent-a"))] == [a.row.id]
    with pytest.raises(NotFound):
        keys.revoke(AgentScope("agent-a"), b.row.prefix)
    with pytest.raises(NotFound):
        keys.revoke(AgentScope("agent-a"), str(b.row.id))
    assert {k.id for k in keys.owned(AllAgents())} == {a.row.id, b.row.id}
    keys.revoke(AllAgents(), str(b.row.id))
    assert [k.id for k in keys.owned(AllAgents())] == [a.row.id]


def test_secrets_are_stored_only_as_peppered_hashes(cold: ColdStore) -> None:
    keys = KeyAdmin(cold, pepper="deployment-pepper")
    created = keys.create(admin=True, agent_id=None)
    with cold.read() as session:
        row = session.conn.execute(select(api_keys)).mappings().one()
    assert created.secret not in str(dict(row))
    assert row["key_hash"] == hash_secret(created.secret, "deployment-pepper")
    assert row["prefix"] == created.secret[:14]
    assert row["is_admin"]
    assert row["agent_id"] is None


def test_the_generated_pepper_is_made_once_per_deployment(cold: ColdStore) -> None:
    with cold.write() as session:
        first = session.keys.pepper()
    with cold.write() as session:
        assert session.keys.pepper() == first
    assert len(first) >= 32


def test_an_ambiguous_prefix_is_a_conflict(cold: ColdStore) -> None:
    with cold.write() as session:
        for n in range(2):
            session.keys.insert(
                key_hash=f"h{n}", prefix="nmafc_same", agent_id="a", is_admin=False, name=""
            )
    with pytest.raises(Conflict):
        KeyAdmin(cold).revoke(AgentScope("a"), "nmafc_same")

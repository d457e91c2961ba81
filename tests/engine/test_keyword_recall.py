"""Recall's keyword list comes from the RAM index, which follows every write."""

from __future__ import annotations

from nmafc.core.facts import FactDraft
from nmafc.core.scope import AgentScope, Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.settings import Settings
from tests.conftest import _Shared

READ = RecallOptions(reinforce=False)
FILLER = [
    FactDraft(f"Ana mentioned her week number {i} was busy", entity=f"ana_week_{i}")
    for i in range(12)
]


def _by_keyword(engine: MemoryEngine, scope: Scope | AgentScope, query: str) -> list[str]:
    hits = engine.recall(scope, query, READ).hits
    ranked = [h for h in hits if "keyword" in h.breakdown.ranks]
    ranked.sort(key=lambda h: h.breakdown.ranks["keyword"])
    return [h.id for h in ranked]


def test_edits_and_deletions_change_what_keywords_find(engine: MemoryEngine, scope: Scope) -> None:
    written = engine.ingest(
        scope,
        [
            FactDraft("Lee keeps a pet axolotl named Bubbles", entity="lee_pet"),
            FactDraft("Ana collects vintage typewriters", entity="ana_hobby"),
            *FILLER,
        ],
    )
    pet, hobby = written.added[0].id, written.added[1].id
    assert _by_keyword(engine, scope, "Is there an axolotl?") == [pet]

    engine.update(scope, pet, content="Lee keeps a pet gecko named Bubbles")
    engine.forget(scope, hobby)

    assert pet not in _by_keyword(engine, scope, "Is there an axolotl?")
    assert _by_keyword(engine, scope, "Which gecko?") == [pet]
    assert _by_keyword(engine, scope, "typewriters") == []


def test_a_reloaded_working_set_finds_the_same(
    settings: Settings, shared_embedder: _Shared, scope: Scope
) -> None:
    queries = ["axolotl", "What was busy for Ana?", "Bubbles the gecko", "week 7"]
    engine = MemoryEngine.open(settings, embedder=shared_embedder)
    try:
        written = engine.ingest(
            scope, [FactDraft("Lee keeps a pet axolotl named Bubbles", entity="lee_pet"), *FILLER]
        )
        engine.update(scope, written.added[0].id, content="Lee keeps a gecko named Bubbles")
        engine.forget(scope, written.added[3].id)
        maintained = [_by_keyword(engine, scope, q) for q in queries]
    finally:
        engine.close()
    reopened = MemoryEngine.open(settings, embedder=shared_embedder)
    try:
        loaded = [_by_keyword(reopened, scope, q) for q in queries]
    finally:
        reopened.close()

    assert maintained == loaded
    assert all(maintained[1:])


def test_an_agent_wide_recall_finds_keywords_in_every_conversation(
    engine: MemoryEngine, scope: Scope
) -> None:
    other = Scope(scope.agent_id, "conversation-2")
    first = engine.ingest(scope, [FactDraft("Lee adopted an axolotl", entity="lee_pet"), *FILLER])
    second = engine.ingest(other, [FactDraft("The axolotl tank is cleaned weekly", entity="tank")])
    stranger = Scope("someone-else", scope.conversation_id)
    engine.ingest(stranger, [FactDraft("My axolotl is pink", entity="pink_axolotl")])

    found = _by_keyword(engine, AgentScope(scope.agent_id), "axolotl")

    assert set(found) == {first.added[0].id, second.added[0].id}

"""The maintenance pass: prune by decay, promote, merge near-duplicates, drop dead links."""

from __future__ import annotations

import numpy as np
import pytest

from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.storage.cold.keyword import FactFilter

from .helpers import assert_consistent, let_turns_pass, say


def _advance(engine: MemoryEngine, scope: Scope, turns: int) -> None:
    """Let time pass: turns whose own facts are short-lived moods."""
    engine.remember(scope, [say("ok", "system")] * turns)


def test_decayed_records_leave_hot_and_active_context_stays_searchable_as_archive(
    engine: MemoryEngine, scope: Scope
) -> None:
    added = engine.ingest(
        scope,
        [
            FactDraft("Caroline feels tired today", "caroline_mood", Tier.EPHEMERAL_STATE),
            FactDraft("Caroline is training for a marathon", "caroline_goal", Tier.ACTIVE_CONTEXT),
            FactDraft("Caroline is allergic to penicillin", "caroline_allergy", Tier.CORE_ANCHOR),
        ],
    ).added
    _advance(engine, scope, 5)
    engine.maintain(scope)
    assert engine.get(scope, added[0].id).invalid_reason == "expired"
    assert engine.get(scope, added[1].id).is_valid
    _advance(engine, scope, 460)
    report = engine.maintain(scope)
    assert report.archived >= 1
    live = {r.entity for r in engine.working_set(scope).values() if r.entity.startswith("caroline")}
    assert live == {"caroline_allergy"}
    archived = engine.get(scope, added[1].id)
    assert archived.invalid_reason == "archived"
    with engine.ctx.cold.read() as session:
        found = session.search.facts(scope, "marathon", where=FactFilter(include_archived=True))
        default = session.search.facts(scope, "marathon")
    assert [r.id for r, _ in found] == [added[1].id]
    assert default == []
    assert_consistent(engine, scope)


def test_often_recalled_active_context_becomes_core_anchor(
    engine: MemoryEngine, scope: Scope
) -> None:
    fact = engine.ingest(scope, [FactDraft("Caroline's dog is named Oscar", "oscar")]).added[0]
    engine.reinforce(scope, [fact.id] * 2)  # once per question, however often it is listed
    for _ in range(9):
        engine.reinforce(scope, [fact.id])  # again at the same turn: already counted
        let_turns_pass(engine, scope, 1)
        engine.reinforce(scope, [fact.id])
    assert engine.get(scope, fact.id).k == 10
    report = engine.maintain(scope)
    assert report.promoted == 1
    assert engine.get(scope, fact.id).tier is Tier.CORE_ANCHOR
    assert_consistent(engine, scope)


def test_near_duplicates_merge_and_links_to_vanished_entities_are_dropped(
    engine: MemoryEngine, scope: Scope
) -> None:
    same = engine.embedder.embed(["Caroline has a dog named Oscar"])[0]
    nearly = same + np.float32(0.01) * engine.embedder.embed(["a dog"])[0]
    engine.ingest(
        scope,
        [
            FactDraft("Caroline has a dog named Oscar", "caroline_dog", vector=same),
            FactDraft("Caroline owns a dog called Oscar", "caroline_pet", vector=nearly),
            FactDraft("Caroline feels sleepy", "caroline_mood", Tier.EPHEMERAL_STATE),
            FactDraft(
                "Caroline walks Oscar when sleepy",
                "caroline_walks",
                Tier.CORE_ANCHOR,
                related_entities=("caroline_mood", "caroline_dog"),
            ),
        ],
    )
    let_turns_pass(engine, scope, 5)
    report = engine.maintain(scope)
    assert report.merged == 1
    assert report.expired == 1
    assert report.relinked == 1
    live = {r.entity: r for r in engine.working_set(scope).values()}
    assert len([e for e in live if e in ("caroline_dog", "caroline_pet")]) == 1
    survivor = live.get("caroline_dog") or live["caroline_pet"]
    assert survivor.k == 1
    assert live["caroline_walks"].related_entities == ("caroline_dog",)
    assert_consistent(engine, scope)


def test_a_pass_is_due_every_n_turns(engine: MemoryEngine, scope: Scope) -> None:
    every = engine.settings.consolidation.every_turns
    _advance(engine, scope, every - 1)
    assert not engine.maintenance_due(scope)
    _advance(engine, scope, 1)
    assert engine.maintenance_due(scope)
    engine.maintain(scope)
    assert not engine.maintenance_due(scope)


def test_recall_never_filters_by_weight(engine: MemoryEngine, scope: Scope) -> None:
    engine.ingest(scope, [FactDraft("Caroline's favourite colour is teal", "colour")])
    _advance(engine, scope, 400)  # weight ≈ 0.135, above the prune line but faded
    result = engine.recall(scope, "favourite colour", RecallOptions(reinforce=False))
    hit = next(h for h in result.hits if "teal" in h.content)
    assert hit.breakdown.weight == pytest.approx(np.exp(-0.005 * 400), rel=1e-6)
    assert "teal" in result.context


def test_faded_facts_are_still_recalled_by_meaning_but_ranked_by_their_weight(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.ingest(scope, [FactDraft("Caroline is training for a marathon", "caroline_goal")])
    let_turns_pass(engine, scope, 500)
    report = engine.maintain(scope)
    assert report.archived == 1
    assert engine.working_set(scope) == {}
    result = engine.recall(scope, "What sport is Caroline preparing for?", RecallOptions())
    hit = next(h for h in result.hits if "marathon" in h.content)
    assert hit.breakdown.vector is not None
    assert hit.breakdown.weight is not None
    assert hit.breakdown.weight <= engine.settings.decay.w_prune + 1e-9
    assert result.reinforced == 0  # the archive is read, not revived
    hidden = engine.recall(scope, "What sport?", RecallOptions(include_archived=False))
    assert "marathon" not in hidden.context


def test_a_pass_over_a_scope_nobody_searches_leaves_what_ram_holds(
    engine: MemoryEngine, scope: Scope
) -> None:
    # A maintenance service walking thousands of due scopes must not evict the ones
    # being searched by caching each scope it passes over.
    searched = Scope(scope.agent_id, "searched")
    engine.remember(searched, [say("I live in Lisbon.")])
    engine.recall(searched, "Where do I live?", RecallOptions(budget_tokens=200))
    engine.remember(scope, [say("I play the violin every evening.")])
    hot = engine.ctx.hot
    hot.cache.drop([scope])  # as after an eviction or a restart: RAM holds only `searched`
    loads = hot.loads
    engine.maintain(scope)
    assert hot.loads == loads + 1  # read for its pass
    assert hot.cache.get(scope) is None  # and not kept
    engine.maintain(searched)
    assert hot.loads == loads + 1  # the cached set served its pass
    assert hot.cache.get(searched) is not None
    result = engine.recall(scope, "What do I play?", RecallOptions(budget_tokens=200))
    assert "violin" in result.context

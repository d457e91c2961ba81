"""A contradicted fact is invalidated, kept in history, and found by point-in-time queries."""

from __future__ import annotations

from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.settings import Settings

from .helpers import assert_consistent, say


def test_override_invalidates_the_old_fact_and_keeps_its_history(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("hello")] * 3)
    paris = engine.ingest(
        scope, [FactDraft("Alice lives in Paris", "alice_home", Tier.CORE_ANCHOR)]
    )
    engine.remember(scope, [say("time passes")] * 2)
    berlin = engine.ingest(
        scope,
        [FactDraft("Alice lives in Berlin", "alice_home_2", overrides_entity="alice_home")],
    )
    old = paris.added[0]
    assert [r.id for r in berlin.invalidated] == [old.id]
    closed = engine.get(scope, old.id)
    assert (closed.invalid_at, closed.invalid_reason) == (5.0, "override")

    now = engine.recall(scope, "where does Alice live", RecallOptions(reinforce=False))
    assert "Berlin" in now.context
    assert "Paris" not in now.context
    then = engine.recall(scope, "where does Alice live", RecallOptions(as_of=4, reinforce=False))
    assert "Paris" in then.context
    assert "Berlin" not in then.context
    both = engine.recall(
        scope, "where does Alice live", RecallOptions(include_invalidated=True, reinforce=False)
    )
    assert "Paris" in both.context
    assert "Berlin" in both.context

    history = engine.history(scope, old.id)
    assert [e.kind.value for e in history.events] == ["add", "invalidate"]
    assert_consistent(engine, scope)


def test_editing_content_makes_a_new_version_and_keeps_the_old(
    engine: MemoryEngine, scope: Scope
) -> None:
    added = engine.remember(scope, [say("I drive a red Toyota.")]).added[0]
    edited = engine.update(scope, added.id, content="Caroline drives a blue Honda.")
    assert edited.version == 2
    assert edited.id == added.id
    history = engine.history(scope, added.id)
    assert [v.content for v in history.versions] == [
        "Caroline: I drive a red Toyota.",
        "Caroline drives a blue Honda.",
    ]
    assert history.versions[0].invalid_reason == "superseded"
    hits = engine.recall(scope, "what car", RecallOptions(reinforce=False))
    facts = hits.context.split("</FACTS>")[0]
    assert "Honda" in facts
    assert "Toyota" not in facts
    retiered = engine.update(scope, added.id, tier="CoreAnchor")
    assert retiered.tier is Tier.CORE_ANCHOR
    assert retiered.version == 2
    assert_consistent(engine, scope)


def test_forget_removes_a_memory_from_recall_but_not_from_history(
    engine: MemoryEngine, scope: Scope
) -> None:
    added = engine.remember(scope, [say("My PIN is 4321.")]).added[0]
    engine.forget(scope, added.id)
    assert "4321" not in engine.recall(scope, "PIN", RecallOptions(reinforce=False)).context
    assert engine.history(scope, added.id).versions[-1].invalid_reason == "deleted"
    assert_consistent(engine, scope)


def test_extracted_attribute_changes_invalidate_the_old_value(
    settings: Settings, shared_embedder: object
) -> None:
    rules = settings.model_copy(update={"extractor": "rules"})
    engine = MemoryEngine.open(rules, embedder=shared_embedder)  # type: ignore[arg-type]
    scope = Scope("agent-moves", "c1")
    try:
        first = engine.remember(scope, [say("I live in Paris with my two cats.")])
        moved = engine.remember(scope, [say("Big news: I just moved to Berlin!")])
        (old,) = first.added
        assert [r.id for r in moved.invalidated] == [old.id]
        assert engine.get(scope, old.id).invalid_reason == "override"
        now = engine.recall(scope, "Where does Caroline live?")
        assert "Berlin" in now.context
        assert old.id not in {hit.id for hit in now.hits}  # the raw Paris turn may show
        history = engine.recall(
            scope, "Where does Caroline live?", RecallOptions(as_of=1, reinforce=False)
        )
        assert "Paris" in history.context
    finally:
        engine.close()

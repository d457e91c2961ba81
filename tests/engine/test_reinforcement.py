"""A recall reinforces what it used, once per turn: chatter and unrelated moods stay as they are."""

from __future__ import annotations

import math

import pytest

from nmafc.core.decay import weight_at
from nmafc.core.facts import FactDraft
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.settings import Settings

from .helpers import let_turns_pass, say

SUBJECT = [
    "I'm training for a marathon in October.",
    "I ran 20 km this morning for my marathon training.",
]
CHATTER = ["ok", "lol sounds good", "haha yes", "Nice, see you later then!"]
QUESTIONS = [
    "How is the marathon training going?",
    "When is the marathon?",
    "How far did I run for the marathon?",
]


def _records(engine: MemoryEngine, scope: Scope) -> dict[str, MemoryRecord]:
    """Every valid record of the scope by content, as the Cold ROM holds it."""
    return {r.content: r for r in engine.page(scope, limit=500).records}


def _small_scope(engine: MemoryEngine, scope: Scope) -> None:
    engine.remember(scope, [say(text, minutes=i) for i, text in enumerate(SUBJECT + CHATTER)])


def test_ten_searches_at_one_turn_reinforce_the_subject_once_and_never_the_chatter(
    engine: MemoryEngine, scope: Scope
) -> None:
    _small_scope(engine, scope)
    before = engine.stats(scope).events.get("reinforce", 0)
    results = [engine.recall(scope, QUESTIONS[i % 3], RecallOptions()) for i in range(10)]
    assert all(any(f"Caroline: {CHATTER[0]}" in h.content for h in r.hits) for r in results)
    facts = _records(engine, scope)
    assert [facts[f"Caroline: {text}"].k for text in SUBJECT] == [1, 1]
    assert {facts[f"Caroline: {text}"].k for text in CHATTER} == {0}
    # Only the first search wrote: the others found nothing due at this turn.
    assert [r.reinforced for r in results] == [2] + [0] * 9
    assert engine.stats(scope).events.get("reinforce", 0) == before + 1
    assert engine.maintain(scope).promoted == 0
    assert {r.tier for r in _records(engine, scope).values()} == {Tier.ACTIVE_CONTEXT}


def test_searches_at_ten_distinct_turns_promote_the_subject_but_never_the_chatter(
    engine: MemoryEngine, scope: Scope
) -> None:
    _small_scope(engine, scope)
    for i in range(10):
        engine.recall(scope, QUESTIONS[i % 3], RecallOptions())
        engine.remember(scope, [say(CHATTER[i % len(CHATTER)], minutes=10 + i)])  # time moves
    facts = _records(engine, scope)
    assert facts[f"Caroline: {SUBJECT[0]}"].k == 10
    assert all(r.k == 0 for r in facts.values() if r.content.removeprefix("Caroline: ") in CHATTER)
    report = engine.maintain(scope)
    assert report.promoted >= 1
    tiers = {r.content: r.tier for r in _records(engine, scope).values()}
    assert tiers[f"Caroline: {SUBJECT[0]}"] is Tier.CORE_ANCHOR
    assert {t for c, t in tiers.items() if c.removeprefix("Caroline: ") in CHATTER} == {
        Tier.ACTIVE_CONTEXT
    }


def test_a_search_about_a_marathon_does_not_revive_a_mood(
    engine: MemoryEngine, scope: Scope
) -> None:
    mood, goal = engine.ingest(
        scope,
        [
            FactDraft("Caroline feels tired today", "caroline_mood", Tier.EPHEMERAL_STATE),
            FactDraft("Caroline is training for a marathon", "caroline_goal"),
        ],
    ).added
    let_turns_pass(engine, scope, 2)
    result = engine.recall(scope, "How is the marathon training going?", RecallOptions())
    assert mood.id in result.fact_ids  # rendered, but not about the question
    assert result.reinforced == 1
    now_mood, now_goal = engine.get(scope, mood.id), engine.get(scope, goal.id)
    assert (now_mood.k, now_mood.anchor_turn) == (0, 0.0)
    assert weight_at(now_mood, 2.0, engine.ctx.decay) == pytest.approx(math.exp(-0.69 * 2))
    assert (now_goal.k, now_goal.anchor_turn) == (1, 2.0)


def test_a_fact_unrelated_to_every_question_keeps_k_zero(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("My sister Melanie paints landscapes."), say(SUBJECT[0])])
    for i in range(6):
        let_turns_pass(engine, scope, 1)
        engine.recall(scope, QUESTIONS[i % 3], RecallOptions())
    facts = _records(engine, scope)
    assert facts["Caroline: My sister Melanie paints landscapes."].k == 0
    assert facts[f"Caroline: {SUBJECT[0]}"].k == 6


def test_the_relevance_and_spacing_constants_are_settings(
    settings: Settings, shared_embedder: object, scope: Scope
) -> None:
    loose = settings.model_copy(
        update={
            "reinforcement": settings.reinforcement.model_copy(
                update={
                    "min_cosine": -1.0,
                    "relative_to_best": 0.0,
                    "max_used": 100,
                    "min_spacing": 0.0,
                }
            )
        }
    )
    engine = MemoryEngine.open(loose, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        _small_scope(engine, scope)
        for _ in range(3):
            engine.recall(scope, QUESTIONS[0], RecallOptions())
        assert {r.k for r in _records(engine, scope).values()} == {3}  # every rendered fact
    finally:
        engine.close()

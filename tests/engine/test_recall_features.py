"""Recall finds what plain similarity misses: dated turns, replies, faded facts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nmafc.core.rendering import CLOSE_SOURCES, OPEN_SOURCES
from nmafc.core.retrieval import PRESETS
from nmafc.core.scope import Scope
from nmafc.core.turns import Message
from nmafc.embedding.tokens import default_counter
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.settings import Settings

DAY1 = datetime(2023, 10, 13, 9, 0, tzinfo=UTC)
DAY2 = datetime(2023, 10, 20, 9, 0, tzinfo=UTC)


def _rules_engine(settings: Settings, embedder: object) -> MemoryEngine:
    return MemoryEngine.open(
        settings.model_copy(update={"extractor": "rules"}),
        embedder=embedder,  # type: ignore[arg-type]
    )


def test_a_question_naming_a_date_finds_what_was_said_that_day(
    settings: Settings, shared_embedder: object
) -> None:
    engine = _rules_engine(settings, shared_embedder)
    scope = Scope("agent-dates", "c1")
    try:
        engine.remember(
            scope, [Message("Here is an abstract piece I made.", speaker="Ana", occurred_at=DAY1)]
        )
        engine.remember(
            scope, [Message("I baked bread all afternoon.", speaker="Ana", occurred_at=DAY2)]
        )
        result = engine.recall(
            scope, "What did Ana share on October 13, 2023?", RecallOptions(reinforce=False)
        )
        dated = [h for h in result.hits if "dates" in h.breakdown.ranks]
        assert [h.turn.occurred_at for h in dated if h.turn] == [DAY1]
    finally:
        engine.close()


def test_a_matching_question_brings_its_reply(settings: Settings, shared_embedder: object) -> None:
    engine = _rules_engine(settings, shared_embedder)
    scope = Scope("agent-replies", "c1")
    try:
        written = engine.remember(
            scope,
            [
                Message(
                    "Who played at your daughter's birthday concert?",
                    speaker="Ana",
                    occurred_at=DAY1,
                ),
                Message(
                    "Thanks! It was Matt Patterson, so talented!", speaker="Ben", occurred_at=DAY1
                ),
                Message("I also repainted the kitchen last week.", speaker="Ben", occurred_at=DAY1),
            ],
        )
        result = engine.recall(
            scope, "Who performed at the birthday concert?", RecallOptions(reinforce=False)
        )
        assert "Matt Patterson" in result.context
        assert written.turns[1].id in result.evidence_turn_ids
    finally:
        engine.close()


@pytest.mark.parametrize("cache_max_mb", [256, 0], ids=["from-ram", "from-the-stores"])
def test_a_list_question_ranks_everything_said_about_the_person_it_names(
    settings: Settings, shared_embedder: object, cache_max_mb: int
) -> None:
    # With the cache off the working set is never in RAM: LanceDB gathers the same list.
    hot = settings.hot.model_copy(update={"cache_max_mb": cache_max_mb})
    engine = _rules_engine(settings.model_copy(update={"hot": hot}), shared_embedder)
    scope = Scope("agent-fanout", "c1")
    cities = ["Lisbon", "Kyoto", "Nairobi"]
    chatter = [
        "I finally fixed the leaking tap in the bathroom.",
        "My sister adopted a grey kitten named Pixel.",
        "The new bakery downtown sells amazing rye bread.",
        "I started learning the cello on Tuesday evenings.",
        "Work has been busy with the quarterly report.",
    ]
    try:
        for day, city in enumerate(cities):
            when = datetime(2023, 3 + day, 1, 9, 0, tzinfo=UTC)
            said = [f"Just got back from a week in {city}, what a trip!", *chatter]
            engine.remember(
                scope, [Message(text, speaker="Ana", occurred_at=when) for text in said]
            )
        result = engine.recall(
            scope, "Which cities has Ana visited?", RecallOptions(reinforce=False)
        )
        fanned = [h.content for h in result.hits if "fanout" in h.breakdown.ranks]
        for city in cities:
            assert any(city in content for content in fanned), (city, fanned)
        assert all(city in result.context for city in cities)

        # Within a tight budget a list question keeps whole turns to its smaller share.
        tight = RecallOptions(budget_tokens=160, reinforce=False)
        listed = engine.recall(scope, "Which cities has Ana visited?", tight)
        plain = engine.recall(scope, "When did Ana get back from Kyoto?", tight)
        share = PRESETS["default"].aggregate_source_share
        assert _source_tokens(listed.context) <= share * 160
        assert _source_tokens(plain.context) > share * 160

        single = engine.recall(
            scope, "What is the name of Ana's sister's kitten?", RecallOptions(reinforce=False)
        )
        assert not any("fanout" in h.breakdown.ranks for h in single.hits)
    finally:
        engine.close()


def _source_tokens(context: str) -> int:
    """Tokens of the context's whole-turn section."""
    if OPEN_SOURCES not in context:
        return 0
    section = context.split(OPEN_SOURCES, 1)[1].split(CLOSE_SOURCES, 1)[0]
    return default_counter().count(section.strip())

"""Importing a long history: what is worth a vector, and what stays a searchable turn.

A long assistant reply yields a few facts (its most salient units), not one per sentence;
the whole reply is still a turn that keyword search finds. A user's facts are extracted as
before, and a text said twice in one import is embedded once.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from nmafc.core.scope import Scope
from nmafc.core.turns import Message
from nmafc.embedding.base import Embedder
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.evaluation.timing import TimedEmbedder
from nmafc.settings import Settings

from .helpers import START

READ = RecallOptions(reinforce=False, budget_tokens=1000)
CITIES = ["Lisbon", "Porto", "Madrid", "Seville", "Valencia", "Bilbao", "Granada", "Toledo"]


def itinerary() -> str:
    """A 40-sentence assistant reply, every sentence specific (names and numbers)."""
    lines = [
        f"Day {day}: take the {7 + day % 5} am train from {CITIES[day % 8]} to "
        f"{CITIES[(day + 3) % 8]} and visit the {CITIES[(day + 5) % 8]} Gallery for "
        f"{10 + day} euros."
        for day in range(1, 40)
    ]
    lines.append("On the last evening, book the Zanzibar Jazz Cellar near Plaza Mayor at 9 pm.")
    return " ".join(lines)


@pytest.fixture
def timed(shared_embedder: Embedder) -> TimedEmbedder:
    return TimedEmbedder(shared_embedder)


@pytest.fixture
def rules_engine(tmp_path: Path, cold_uri: str, timed: TimedEmbedder) -> Iterator[MemoryEngine]:
    settings = Settings(
        data_dir=tmp_path,
        cold={"uri": cold_uri},  # type: ignore[arg-type]
        consolidation={"inline": False},  # type: ignore[arg-type]
        extractor="rules",
    )
    opened = MemoryEngine.open(settings, embedder=timed)
    yield opened
    opened.close()


def message(text: str, role: str, seconds: int) -> Message:
    return Message(text, role=role, speaker=role, occurred_at=START + timedelta(seconds=seconds))


def test_a_long_assistant_reply_costs_a_few_vectors_and_stays_searchable(
    rules_engine: MemoryEngine, scope: Scope, timed: TimedEmbedder
) -> None:
    cap = 3  # the default of `extraction.max_assistant_facts`
    user = "My daughter Priya starts violin lessons at the Lisbon conservatory in March."
    result = rules_engine.remember(
        scope,
        [
            message(user, "user", 0),
            message("Can you plan a 40-day rail trip through Spain and Portugal?", "user", 1),
            message(itinerary(), "assistant", 2),
        ],
    )
    reply = result.turns[2]
    from_reply = [r for r in result.added if reply.id in r.source_turn_ids]
    assert 1 <= len(from_reply) <= cap
    assert timed.texts == len(result.added) <= cap + 3  # one vector per fact, no more

    # The user's fact is still a fact, found by meaning.
    found = rules_engine.recall(scope, "What instrument is my daughter learning?", READ)
    assert any(h.kind == "fact" and "violin" in h.content for h in found.hits)
    assert "Priya" in found.context

    # A sentence of the reply that made no fact is still found, as the reply's turn.
    deep = rules_engine.recall(scope, "Which jazz cellar near Plaza Mayor?", READ)
    assert reply.id in deep.evidence_turn_ids
    assert "Zanzibar Jazz Cellar" in deep.context


def test_a_text_said_twice_in_one_import_is_embedded_once(
    rules_engine: MemoryEngine, scope: Scope, timed: TimedEmbedder
) -> None:
    said = "I'm allergic to shellfish and peanuts since 2019."
    result = rules_engine.remember(scope, [message(said, "user", 0), message(said, "user", 3600)])
    assert len(result.added) == 2  # both turns keep their fact
    assert timed.texts == 1
    with rules_engine.ctx.cold.read() as session:
        stored = session.facts.vectors(scope, [(r.id, r.version) for r in result.added])
    first, second = stored.values()
    assert float(first @ second) == pytest.approx(1.0, abs=1e-5)
    found = rules_engine.recall(scope, "What am I allergic to?", READ)
    assert sum(1 for h in found.hits if h.kind == "fact" and "shellfish" in h.content) >= 1

"""Rendering packs ranked facts and source turns into the budget, never more."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from nmafc.core.lifecycle import InvalidReason, invalidate
from nmafc.core.rendering import (
    Candidate,
    Hydration,
    best_lines,
    fact_line,
    fewest_tokens,
    format_date,
    render,
)
from nmafc.core.turns import Turn
from nmafc.embedding.tokens import default_counter

from .factories import T0, record

COUNT = default_counter().count


def _turn(i: int, text: str) -> Turn:
    return Turn(i, "a", "c", float(i), "user", "Caroline", text, occurred_at=T0)


def test_facts_are_grouped_under_the_day_learnt_and_closed_ones_show_their_end() -> None:
    assert fact_line(record(content="Caroline lives in Paris.")) == "- Caroline lives in Paris."
    closed = invalidate(record(content="Caroline lives in Paris."), 9, T0, InvalidReason.OVERRIDE)
    assert fact_line(closed) == "- Caroline lives in Paris. (until 8 May 2023: override)"
    # A fact that faded out of the working set is still true: it gets no end.
    faded = invalidate(record(content="Caroline lives in Paris."), 9, T0, InvalidReason.ARCHIVED)
    assert fact_line(faded) == "- Caroline lives in Paris."
    out = render(
        [Candidate(record=record(content="A.")), Candidate(record=record(content="B."))],
        budget_tokens=200,
        count=COUNT,
    )
    assert out.text.splitlines()[:4] == ["<FACTS>", "8 May 2023:", "- A.", "- B."]


def test_the_budget_is_never_exceeded() -> None:
    facts = [Candidate(record=record(content=f"Fact {i} " + "word " * 12)) for i in range(60)]
    turns = [Candidate(turn=_turn(i, "Some sentence here. " * 8)) for i in range(20)]
    for budget in (40, 200, 1000):
        out = render([*facts, *turns], budget_tokens=budget, count=COUNT)
        assert out.tokens <= budget
        assert out.tokens == COUNT(out.text)


def test_top_facts_are_shown_through_their_whole_source_turn_later_ones_as_lines() -> None:
    source = _turn(7, "I went to the support group yesterday. It was powerful. Really.")
    fact = record(content="Caroline went to the support group.", source_turn_ids=(7,))
    other = record(content="Caroline adopted a dog.", source_turn_ids=(8,))
    other_source = _turn(8, "I adopted a dog last week. His name is Rex and he is loud.")
    later = _turn(9, "Unrelated chatter. The beach was lovely at sunset. More chatter.")
    out = render(
        [
            Candidate(record=fact, sources=(source,)),
            Candidate(record=other, sources=(other_source,)),
            Candidate(turn=later),
        ],
        budget_tokens=400,
        count=COUNT,
        query_terms=["beach"],
        hydration=Hydration(full_turns=1),
    )
    # The whole turn says what the fact says and more: the fact line would repeat it.
    assert "It was powerful. Really." in out.text
    assert "- Caroline went to the support group." not in out.text
    assert out.shown_as_turns == [fact.id]
    # Past the first, a fact is its own line and its turn is not hydrated.
    assert out.fact_ids == [other.id]
    assert "- Caroline adopted a dog." in out.text
    assert "Rex" not in out.text
    assert out.turn_ids == [7, 9]
    assert "The beach was lovely at sunset." in out.text  # trimmed to the matching line
    assert "Unrelated" not in out.text
    assert set(out.covered_turn_ids) == {7, 8, 9}


def test_an_edited_fact_is_never_shown_through_its_turn() -> None:
    source = _turn(7, "I drive a red Toyota. It is old but it runs.")
    edited = record(content="Caroline drives a blue Honda.", source_turn_ids=(7,), version=2)
    for hydration in (Hydration(full_turns=1), Hydration(full_turns=0, turn_for_fact=9.0)):
        out = render(
            [Candidate(record=edited, sources=(source,))],
            budget_tokens=300,
            count=COUNT,
            hydration=hydration,
        )
        assert "- Caroline drives a blue Honda." in out.text
        assert out.fact_ids == [edited.id]
        assert out.shown_as_turns == []


def test_a_top_fact_keeps_its_line_when_its_turn_cannot_be_shown_whole() -> None:
    source = _turn(7, "I went to the support group yesterday. " + "It was powerful. " * 40)
    fact = record(content="Caroline went to the support group.", source_turn_ids=(7,))
    out = render(
        [Candidate(record=fact, sources=(source,))],
        budget_tokens=60,
        count=COUNT,
        hydration=Hydration(full_turns=1),
    )
    assert out.fact_ids == [fact.id]
    assert out.turn_ids == []
    assert "- Caroline went to the support group." in out.text


def test_a_turn_a_chosen_fact_stands_in_for_is_not_repeated_as_a_trimmed_source() -> None:
    fact = record(content="Caroline adopted a dog.", source_turn_ids=(3,))
    out = render(
        [Candidate(record=fact), Candidate(turn=_turn(3, "I adopted a dog. His name is Rex."))],
        budget_tokens=400,
        count=COUNT,
        hydration=Hydration(full_turns=0),
    )
    assert out.turn_ids == []
    assert out.covered_turn_ids == [3]


def test_best_lines_keep_the_matching_sentences_in_order() -> None:
    text = "We went out. The museum had dinosaurs. Then lunch. Dinosaurs are cool."
    assert best_lines(text, ["dinosaurs", "museum"], 2) == (
        "The museum had dinosaurs. … Dinosaurs are cool."
    )


def test_dates_are_formatted_by_their_own_calendar_day_every_time() -> None:
    late = datetime(2023, 5, 7, 23, 30, tzinfo=UTC)
    east = late.astimezone(timezone(timedelta(hours=2)))  # the same instant, 8 May there
    for _ in range(2):  # the second round is served from the cache
        assert format_date(late) == "7 May 2023"
        assert format_date(east) == "8 May 2023"
        assert format_date(datetime(2024, 2, 29)) == "29 February 2024"


@pytest.mark.parametrize(
    "text",
    [
        "Sure! Here are some tips for a 5-day trip to Kyoto: temples, food, and more.",
        "naïve café-au-lait — déjà vu… 東京 in 2023!!!",
        "a" * 300 + " " + "x-y-z " * 20,
        "   \n\t ",
        "!!! ??? ... --- (1) [a]",
        "Emoji 🎉🎉 and zero\u200bwidth joiners, ТЕКСТ кириллица 42",
    ],
)
def test_fewest_tokens_never_exceeds_the_wordpiece_count(text: str) -> None:
    assert fewest_tokens(text) <= COUNT(text)
    assert fewest_tokens(text) <= COUNT(f"[3 May 2023 · turn 4] Ann: {text}")

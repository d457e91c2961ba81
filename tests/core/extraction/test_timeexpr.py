"""Relative time is resolved against when it was said, and the original phrase is kept."""

from datetime import date

import pytest

from nmafc.core.extraction.timeexpr import find, resolve

SAID = date(2023, 5, 25)  # a Thursday


@pytest.mark.parametrize(
    ("sentence", "meaning"),
    [
        ("I went yesterday", "24 May 2023"),
        ("the day before yesterday", "23 May 2023"),
        ("I'll call you tomorrow", "26 May 2023"),
        ("two days ago", "23 May 2023"),
        ("3 weeks ago", "3 weeks before 25 May 2023, around 4 May 2023"),
        ("a few months ago", "February 2023"),
        ("ten years ago", "2013"),
        ("last Saturday", "the Saturday before 25 May 2023, 20 May 2023"),
        ("last Thu", "the Thursday before 25 May 2023, 18 May 2023"),
        ("next Friday", "the Friday after 25 May 2023, 26 May 2023"),
        ("last weekend", "the weekend before 25 May 2023"),
        ("two weekends ago", "2 weekends before 25 May 2023"),
        ("last week", "the week before 25 May 2023"),
        ("next month", "June 2023"),
        ("last month", "April 2023"),
        ("this month", "May 2023"),
        ("last year", "2022"),
        ("in two years", "2025"),
        ("last summer", "summer 2022"),
        ("this summer", "summer 2023"),
        ("last spring", "spring 2022"),  # said in spring: the previous one
        # One of each remaining rule: a text is only searched when it holds an anchor word
        # (a weekday, a unit of time, a season, ...), so every rule's phrase must hold one.
        ("last night", "24 May 2023"),
        ("this morning", "25 May 2023"),
        ("tonight", "25 May 2023"),
        ("two days from now", "27 May 2023"),
        ("this coming Tuesday", "the Tuesday after 25 May 2023, 30 May 2023"),
        ("this week", "the week of 25 May 2023"),
        ("next weekend", "the weekend after 25 May 2023"),
        ("last fall", "autumn 2022"),
    ],
)
def test_phrases_resolve_to_absolute_time(sentence: str, meaning: str) -> None:
    (found,) = find(sentence, SAID)
    assert found.meaning == meaning


def test_the_phrase_stays_and_the_date_is_added_beside_it() -> None:
    text, found = resolve("I went to a support group yesterday and it was great.", date(2023, 5, 8))
    assert text == "I went to a support group yesterday (7 May 2023) and it was great."
    assert [f.phrase for f in found] == ["yesterday"]


def test_longer_phrases_win_over_their_parts_and_several_resolve() -> None:
    text, found = resolve("The day before yesterday and last week too.", SAID)
    assert [f.phrase for f in found] == ["The day before yesterday", "last week"]
    assert "(23 May 2023)" in text
    assert "(the week before 25 May 2023)" in text


def test_sentences_without_relative_time_are_left_alone() -> None:
    assert resolve("I love painting sunsets.", SAID) == ("I love painting sunsets.", [])

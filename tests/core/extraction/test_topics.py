"""A fact's topic names a thing, never a date word or the whole sentence."""

import pytest

from nmafc.core.extraction.topics import is_date_word, topic


@pytest.mark.parametrize(
    ("sentence", "speaker", "about"),
    [
        ("I went to a support group yesterday.", "", "support group"),
        ("I love hiking.", "", "hiking"),
        ("Maya is feeling stressed about her exams.", "Maya", "exams"),
        ("Maya is feeling stressed about her exams.", "", "maya"),
        ("I started a pottery class on Monday.", "", "pottery class"),
        ("I finally visited Lisbon last March!", "", "lisbon"),
        ('We watched "The Long Goodbye" on Friday.', "", "the long goodbye"),
        ("It was really great, so much fun!", "", ""),
        ("I taught myself to bake sourdough.", "", "bake sourdough"),
    ],
)
def test_the_topic_is_at_most_two_adjacent_content_words_not_the_speaker(
    sentence: str, speaker: str, about: str
) -> None:
    assert topic(sentence, exclude=(speaker,)) == about


@pytest.mark.parametrize(
    "sentence",
    ["See you on Friday!", "I'll call you tomorrow morning.", "We met in May, last spring.",
     "It happened yesterday afternoon."],
)  # fmt: skip
def test_time_words_are_never_a_topic(sentence: str) -> None:
    assert topic(sentence) == ""


@pytest.mark.parametrize(
    ("word", "dated"),
    [("March", True), ("friday", True), ("Tue.", True), ("today", True), ("Winter", True),
     ("Lisbon", False), ("Maya", False), ("Pottery", False)],
)  # fmt: skip
def test_date_words(word: str, dated: bool) -> None:
    assert is_date_word(word) is dated

"""Filler is dropped; names, numbers and dated events score high."""

import pytest

from nmafc.core.extraction.salience import proper_nouns, score


@pytest.mark.parametrize(
    "filler",
    ["Hey Mel!", "Thanks so much, Sam!", "Wow, that's cool, Jordan!", "Talk to you soon!", "Bye!",
     "How have you been?", "That sounds great!", "Yep, Alex."],
)  # fmt: skip
def test_greetings_thanks_and_backchannel_are_filler(filler: str) -> None:
    assert score(filler).is_filler


@pytest.mark.parametrize(
    "sentence", ["Congrats Caroline!", "Woohoo Melanie!", "Yeah, same here Caroline."],
)  # fmt: skip
def test_the_names_of_the_people_talking_only_address_them(sentence: str) -> None:
    assert not score(sentence).is_filler  # without knowing who talks, a name may be news
    assert score(sentence, participants=("Melanie", "Caroline")).is_filler


def test_other_names_and_possessives_of_participants_still_count() -> None:
    assert not score("It was Matt", participants=("Melanie", "Caroline")).is_filler
    assert not score(
        "Caroline's passion for art is awesome.", participants=("Melanie", "Caroline")
    ).is_filler


@pytest.mark.parametrize(
    "fact",
    ["I moved to Berlin!", "My sister paints landscapes.", "I ran a 10k in 52 minutes.",
     'I loved reading "Charlotte\'s Web" as a kid.'],
)  # fmt: skip
def test_facts_are_kept(fact: str) -> None:
    result = score(fact)
    assert not result.is_filler
    assert result.importance >= 0.3


def test_specifics_raise_importance_and_content_free_questions_lower_it() -> None:
    plain = score("I went to a group.").importance
    dated = score("I went to a group in Boston on 7 May.", has_time=True).importance
    assert dated > plain
    assert score("Did you hear any stories?").importance < 0.3


def test_proper_nouns_skip_sentence_starts_and_the_pronoun() -> None:
    assert proper_nouns("I think Caroline moved to New York. Then she left.") == [
        "Caroline",
        "New",
        "York",
    ]

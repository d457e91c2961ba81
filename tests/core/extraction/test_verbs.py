"""The verb after a name that replaced "I" or "you" agrees with it."""

import pytest

from nmafc.core.extraction.verbs import agree


@pytest.mark.parametrize(
    ("verb", "agreed"),
    [
        ("live", "lives"), ("love", "loves"), ("go", "goes"), ("watch", "watches"),
        ("miss", "misses"), ("fix", "fixes"), ("try", "tries"), ("play", "plays"),
        ("need", "needs"), ("am", "is"), ("are", "is"), ("have", "has"), ("do", "does"),
        ("don't", "doesn't"), ("haven't", "hasn't"), ("were", "was"), ("Are", "Is"),
    ],
)  # fmt: skip
def test_a_base_form_takes_the_third_person_singular(verb: str, agreed: str) -> None:
    assert agree(verb) == agreed


@pytest.mark.parametrize(
    "word",
    ["was", "can", "would", "must", "won't", "went", "taught", "painted", "agreed", "read",
     "put", "gonna", "and", "too", "a", "the", "guys", "Paris"],
)  # fmt: skip
def test_modals_pasts_and_non_verbs_are_left_alone(word: str) -> None:
    assert agree(word) == word

"""Questions, fillers and an assistant's chatter are told apart from statements."""

import pytest

from nmafc.core.extraction.discourse import as_statement, is_assistant_chatter, strip_openers


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("Actually, I live in Rome.", "I live in Rome."),
        ("Actually pretty busy.", "Pretty busy."),
        ("Well, my brother is a chef.", "My brother is a chef."),
        ("So I bought a kayak.", "I bought a kayak."),
        ("Oh I adore tulips.", "I adore tulips."),
        ("Honestly the soup was cold.", "The soup was cold."),
        ("Anyway, the trip is in June.", "The trip is in June."),
        ("Yeah, we sold the car.", "We sold the car."),
        ("Oh well, yeah, I quit.", "I quit."),
        ("By the way, my cousin paints.", "My cousin paints."),
        ("Hey Priya, since Monday I walk to work.", "Since Monday I walk to work."),
    ],
)
def test_discourse_fillers_at_the_start_are_dropped(said: str, kept: str) -> None:
    assert strip_openers(said) == kept


@pytest.mark.parametrize("said", ["So excited!", "Well done!", "Sure thing.", "Okay.", "Oh!"])
def test_a_filler_that_opens_nothing_stays(said: str) -> None:
    assert strip_openers(said) == said


@pytest.mark.parametrize(
    "question",
    ["Do you only play old board games?", "Where did you grow up?", "Really?!",
     "How was the hike? :)", "You moved to Quebec?", "Do you ski, or do you snowboard?",
     "Wait, what did you say?"],
)  # fmt: skip
def test_a_question_states_nothing(question: str) -> None:
    assert as_statement(question) is None


@pytest.mark.parametrize(
    ("said", "statement"),
    [
        ("Did I tell you I adopted a ferret?", "I adopted a ferret."),
        ("Did I mention that I passed my exam?", "I passed my exam."),
        ("Have I told you about my trip to Kyoto?", "I told you about my trip to Kyoto."),
        ("The lake was freezing, you know?", "The lake was freezing."),
        ("It opens at noon, right?", "It opens at noon."),
        (
            "I can lend you the tent on Friday, how does that sound?",
            "I can lend you the tent on Friday.",
        ),
        ("I baked rye bread today.", "I baked rye bread today."),
        ("What a week!", "What a week!"),
    ],
)
def test_statements_wrapped_in_a_question_are_unwrapped(said: str, statement: str) -> None:
    assert as_statement(said) == statement


@pytest.mark.parametrize(
    "chatter",
    ["Sure, here you go!", "Happy to help.", "Here's a list.", "Let me check that for you.",
     "I hope this helps!", "Feel free to ask more.", "I can help with that.",
     "You're welcome.", "Great question!", "If you need anything else, just ask."],
)  # fmt: skip
def test_an_assistants_pleasantries_and_offers_are_chatter(chatter: str) -> None:
    assert is_assistant_chatter(chatter)


@pytest.mark.parametrize(
    "statement",
    ["Since you are vegetarian, a lentil stew works well.", "The museum opens at 9 am.",
     "Your flight leaves from gate 12.", "I recommend the night train to Porto."],
)  # fmt: skip
def test_an_assistants_statements_about_the_user_or_the_world_are_not(statement: str) -> None:
    assert not is_assistant_chatter(statement)

"""The LLM-free extractor end to end on a short exchange."""

from datetime import UTC, datetime

import pytest

from nmafc.core.extraction.rule_based import RuleExtractor
from nmafc.core.tiers import Tier
from nmafc.core.turns import Message

WHEN = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _say(speaker: str, text: str, captions: tuple[str, ...] = ()) -> Message:
    return Message(text, speaker=speaker, occurred_at=WHEN, captions=captions)


def test_a_conversation_becomes_self_contained_dated_linked_facts() -> None:
    drafts = RuleExtractor().extract(
        [
            _say("Ana", "Hey Ben! Good to see you!"),
            _say("Ben", "Hi Ana! I ran the Boston marathon yesterday. My time was 3:45."),
            _say("Ana", "You must be exhausted!", ("a photo of a medal",)),
        ]
    )
    contents = [d.content for d in drafts]
    assert not any("Good to see you" in c for c in contents)
    marathon = next(d for d in drafts if "marathon" in d.content)
    # A short follow-up sentence stays with the sentence it leans on.
    assert (
        marathon.content
        == "Ben ran the Boston marathon yesterday (7 May 2023). Ben's time was 3:45."
    )
    assert marathon.tier is Tier.CORE_ANCHOR
    assert marathon.message_index == 1
    assert {"ben", "boston"} <= set(marathon.related_entities)
    assert "Ben must be exhausted!" in contents[-2] or any("Ben must be" in c for c in contents)
    caption = drafts[-1]
    assert caption.content == "Ana shared an image: a photo of a medal"
    assert caption.message_index == 2


def test_a_single_valued_attribute_overrides_its_previous_value() -> None:
    (fact,) = RuleExtractor().extract([_say("Ana", "I just moved to Lisbon for work.")])
    assert fact.entity == "ana_lives_in"
    assert fact.overrides_entity == "ana_lives_in"


def test_role_only_speakers_get_readable_names() -> None:
    (fact,) = RuleExtractor().extract([Message("I am allergic to shellfish.", role="user")])
    assert fact.content == "User is allergic to shellfish."


def test_sentences_that_lean_on_the_previous_one_stay_with_it() -> None:
    (fact,) = RuleExtractor().extract(
        [
            _say(
                "Ana",
                'I loved "Becoming Nicole" by Amy Ellis Nutt. It is a true story. '
                "Highly recommend it!",
            )
        ]
    )
    assert fact.content.startswith('Ana loved "Becoming Nicole"')
    assert fact.content.endswith("Highly recommend it!")


def test_a_reply_carries_the_question_it_answers_for_embedding_only() -> None:
    drafts = RuleExtractor().extract(
        [
            _say("Ana", "Who played at the concert?"),
            _say("Ben", "It was Matt Patterson, so talented!"),
        ]
    )
    reply = drafts[-1]
    assert reply.context == "Who played at the concert?"
    assert "concert" not in reply.content


def _facts(*said: tuple[str, str], role: str = "user") -> list[str]:
    messages = [Message(text, role=role, speaker=who, occurred_at=WHEN) for who, text in said]
    return [d.content for d in RuleExtractor().extract(messages)]


@pytest.mark.parametrize(
    ("speaker", "said", "fact"),
    [
        ("Bob", "I live in Lisbon with my two cats.", "Bob lives in Lisbon with Bob's two cats."),
        ("Carol", "Honestly, I love hiking in the Alps.", "Carol loves hiking in the Alps."),
        (
            "Dev",
            "Well, I taught myself to play the banjo.",
            "Dev taught themself to play the banjo.",
        ),
        (
            "Eve",
            "So I have a new job at a bakery in Leeds.",
            "Eve has a new job at a bakery in Leeds.",
        ),
    ],
)
def test_a_statement_becomes_one_grammatical_self_contained_fact(
    speaker: str, said: str, fact: str
) -> None:
    assert _facts(("Zed", "Hello!"), (speaker, said)) == [fact]


@pytest.mark.parametrize(
    "turn",
    ["Do you only play old board games from the seventies?", "Hi Zed, how are you doing?",
     "Thanks so much for the recipe, Zed!", "Okay.", "Sure!", "Totally agree with that.",
     "Where did you and Maria go for the holidays in Vermont?"],
)  # fmt: skip
def test_questions_greetings_thanks_and_one_word_replies_are_no_facts(turn: str) -> None:
    assert _facts(("Zed", "I finished my thesis on glaciers."), ("Ana", turn))[1:] == []


def test_a_question_after_a_statement_is_left_out_of_its_fact() -> None:
    assert _facts(("Ana", "I planted tomatoes in my garden. Have you ever grown any?")) == [
        "Ana planted tomatoes in Ana's garden."
    ]


def test_an_assistant_reply_is_a_fact_only_where_it_states_something() -> None:
    said = [
        Message("Can you suggest a pasta dish for dinner tonight?", role="user", occurred_at=WHEN),
        Message(
            "Sure, here you go! Since you are vegetarian, a mushroom ragu works well. "
            "Happy to help. Would you like a dessert idea too?",
            role="assistant",
            occurred_at=WHEN,
        ),
    ]
    contents = [d.content for d in RuleExtractor().extract(said)]
    assert contents == ["Assistant: Since User is vegetarian, a mushroom ragu works well."]


def test_an_assistants_pleasantries_alone_are_no_fact() -> None:
    assert _facts(("assistant", "Sure, here you go! Happy to help."), role="assistant") == []


@pytest.mark.parametrize(
    ("said", "entity", "related"),
    [
        ("I met Lena at the Harbour Cafe last Friday.", "bob_lena",
         {"bob", "lena", "harbour_cafe"}),
        ("In March I started a pottery class in Porto.", "bob_pottery_class", {"bob", "porto"}),
        ("My sister adopted a beagle on Monday.", "bob_sister", {"bob"}),
        ('I finished reading "The Glass Hotel" today.', "bob_the_glass_hotel",
         {"bob", "the_glass_hotel"}),
        ("I moved to Quito in May.", "bob_lives_in", {"bob", "quito"}),
    ],
)  # fmt: skip
def test_entities_are_the_things_a_fact_is_about_never_dates_or_sentences(
    said: str, entity: str, related: set[str]
) -> None:
    (fact,) = RuleExtractor().extract([Message(said, speaker="Bob", occurred_at=WHEN)])
    assert fact.entity == entity
    assert set(fact.related_entities) == related


def test_a_question_carried_on_in_lower_case_is_still_left_out() -> None:
    assert _facts(
        ("Ana", "I finished my thesis on glaciers."),
        ("Zed", "Did you defend it already? sounds like you worked on it for years!"),
    )[1:] == ["Zed: sounds like Ana worked on it for years!"]

"""The LLM-free extractor end to end on a short exchange."""

from datetime import UTC, datetime

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

"""Aggregate questions ask for a count or a list gathered over time; others do not."""

from __future__ import annotations

import pytest

from nmafc.core.aggregate import is_aggregate


@pytest.mark.parametrize(
    "question",
    [
        "Which cities has Priya visited?",
        "What books has Tom read this year?",
        "What hobbies does Lena pick up in winter?",
        "What kinds of music does Omar listen to?",
        "What type of car does Mia drive?",
        "How many times has Sam been to Paris?",
        "How many dogs does Ravi have?",
        "What are some things Kim cooks for friends?",
        "What do Ada and Lin both enjoy?",
        "What do Ada and Lin have in common?",
        "Has Noor ever tried surfing?",
        "What has Jun painted?",
        "Where has Aiko camped?",
        "What sports did Ben play as a kid?",
    ],
)
def test_questions_whose_answer_is_a_list_or_a_count(question: str) -> None:
    assert is_aggregate(question)


@pytest.mark.parametrize(
    "question",
    [
        "What does Lena do for a living?",
        "What is Omar's favourite colour?",
        "When did Sam move to Paris?",
        "Where does Ravi work?",
        "Who is Kim's sister?",
        "What did Tom say about the weather?",
        "Why did Mia sell her house?",
        "Which is closer, the park or the lake?",
        "What was the name of Jun's first boss?",
    ],
)
def test_questions_about_one_thing(question: str) -> None:
    assert not is_aggregate(question)

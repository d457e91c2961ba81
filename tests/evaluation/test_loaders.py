"""Loaders on tiny synthetic files in the official LoCoMo and LongMemEval formats."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nmafc.errors import InvalidInput
from nmafc.evaluation.loaders import (
    load_locomo,
    load_longmemeval,
    parse_locomo_date,
    parse_longmemeval_date,
)

SECRET = "DERIVED-SUMMARY-MUST-NOT-LEAK"


def _turn(dia_id: str, speaker: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text, **extra}


def locomo_sample(sample_id: str = "conv-1") -> dict[str, Any]:
    # Keys deliberately out of order: session_10 before session_2, dates after sessions,
    # and a date-only session_11 (the real file has such keys) that has no turns.
    conversation: dict[str, Any] = {
        "speaker_a": "Ann",
        "speaker_b": "Bob",
        "session_10": [_turn("D10:1", "Bob", "Ten.")],
        "session_1": [
            _turn("D1:1", "Ann", "Hi Bob!"),
            _turn("D1:2", "Bob", "", blip_caption="a photo of a dog", img_url="http://x"),
            _turn("D1:3", "Ann", "   "),
        ],
        "session_2": [_turn("D2:1", "Ann", "I ran a marathon."), _turn("D2:2", "Bob", "Wow")],
        "session_2_date_time": "10:04 am on 7 February, 2022",
        "session_10_date_time": "9:00 pm on 1 December, 2022",
        "session_1_date_time": "1:56 pm on 8 May, 2021",
        "session_11_date_time": "1:00 pm on 2 December, 2022",
    }
    qa = [
        {"question": "When?", "answer": 2022, "evidence": ["D2:1"], "category": 2},
        {
            "question": "What?",
            "answer": "dog",
            "evidence": ["D1:2; D2:9", "D", "D:11:26", "D1:1 D2:2", "D2:1"],
            "category": 1,
        },
        {"question": "Adv?", "adversarial_answer": "cat", "evidence": ["D7:7"], "category": 5},
    ]
    return {
        "sample_id": sample_id,
        "conversation": conversation,
        "qa": qa,
        "observation": {"session_1_observation": SECRET},
        "session_summary": {"session_1_summary": SECRET},
        "event_summary": {"events_session_1": SECRET},
    }


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_locomo_dates_parse_per_session_key() -> None:
    assert parse_locomo_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_locomo_date("10:04 am on 7 Feb, 2022") == datetime(2022, 2, 7, 10, 4, tzinfo=UTC)
    with pytest.raises(ValueError, match="unrecognised"):
        parse_locomo_date("yesterday")


def test_locomo_sessions_sort_numerically_with_their_own_dates(tmp_path: Path) -> None:
    data = load_locomo(write_json(tmp_path / "l.json", [locomo_sample()]))
    (conv,) = data.conversations
    assert [s.id for s in conv.sessions] == ["session_1", "session_2", "session_10"]
    assert [s.occurred_at.date().isoformat() for s in conv.sessions] == [
        "2021-05-08",
        "2022-02-07",
        "2022-12-01",
    ]
    assert conv.sessions[1].date_label == "7 February 2022"


def test_locomo_turns_keep_captions_and_skip_empty_ones(tmp_path: Path) -> None:
    data = load_locomo(write_json(tmp_path / "l.json", [locomo_sample()]))
    turns = [t for _, t in data.conversations[0].turns()]
    assert [t.id for t in turns] == ["D1:1", "D1:2", "D2:1", "D2:2", "D10:1"]
    assert turns[1].captions == ("a photo of a dog",)
    assert turns[1].full_text() == "[shared an image: a photo of a dog]"
    assert data.counts["empty_turns_skipped"] == 1
    assert all(SECRET not in t.full_text() for t in turns)


def test_locomo_evidence_is_parsed_leniently_and_drops_are_counted(tmp_path: Path) -> None:
    data = load_locomo(write_json(tmp_path / "l.json", [locomo_sample()]))
    when, what, adversarial = data.questions
    assert when.evidence == ("D2:1",)
    assert what.evidence == ("D1:2", "D1:1", "D2:2", "D2:1")
    assert adversarial.evidence == ()
    counts = data.counts
    assert counts["evidence_raw"] == 7
    assert counts["evidence_malformed"] == 4  # 'D1:2; D2:9', 'D', 'D:11:26', 'D1:1 D2:2'
    assert counts["evidence_recovered_from_malformed"] == 4
    assert counts["evidence_dropped_unparseable"] == 2
    assert counts["evidence_dropped_unresolved"] == 2  # D2:9, D7:7
    assert counts["questions_without_resolvable_evidence"] == {"5": 1}
    assert counts["questions_by_category"] == {"1": 1, "2": 1, "5": 1}


def test_locomo_answers_are_strings_and_adversarial_answers_are_used(tmp_path: Path) -> None:
    data = load_locomo(write_json(tmp_path / "l.json", [locomo_sample()]))
    assert [q.answer for q in data.questions] == ["2022", "dog", "cat"]
    assert [q.category for q in data.questions] == ["2", "1", "5"]
    assert [q.id for q in data.questions] == ["conv-1:q0", "conv-1:q1", "conv-1:q2"]


def test_locomo_conversation_filter(tmp_path: Path) -> None:
    path = write_json(tmp_path / "l.json", [locomo_sample("a"), locomo_sample("b")])
    data = load_locomo(path, ["b"])
    assert [c.id for c in data.conversations] == ["b"]
    assert {q.conversation_id for q in data.questions} == {"b"}
    with pytest.raises(InvalidInput, match="zzz"):
        load_locomo(path, ["zzz"])
    with pytest.raises(InvalidInput, match="No data file"):
        load_locomo(tmp_path / "missing.json")


def lme_item(qid: str, answer_turn: bool = True) -> dict[str, Any]:
    return {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": "Where did I go?",
        "question_date": "2023/05/30 (Tue) 23:40",
        "answer": 42,
        "answer_session_ids": ["answer_1"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 18:14"],
        "haystack_session_ids": ["noise_1", "answer_1"],
        "haystack_sessions": [
            [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}],
            [
                {"role": "user", "content": ""},
                {"role": "user", "content": "I went to Oslo.", "has_answer": answer_turn},
                {"role": "assistant", "content": "Nice.", "has_answer": False},
            ],
        ],
    }


@pytest.mark.parametrize("gzipped", [True, False])
def test_longmemeval_loads_gzip_or_plain_json(tmp_path: Path, gzipped: bool) -> None:
    items = [lme_item("q1"), lme_item("q2_abs", answer_turn=False), lme_item("q3")]
    path = tmp_path / "lme.json.gz"
    if gzipped:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            json.dump(items, handle)
    else:
        write_json(path, items)
    data = load_longmemeval(path, limit=2)
    assert [q.id for q in data.questions] == ["q1", "q2_abs"]
    first, abstention = data.questions
    assert (first.abstention, abstention.abstention) == (False, True)
    assert first.answer == "42"
    assert first.evidence == ("answer_1:1",)
    assert abstention.evidence == ()
    assert first.answer_sessions == ("answer_1",)
    conv = data.conversations[0]
    assert conv.id == "q1"
    assert [s.id for s in conv.sessions] == ["noise_1", "answer_1"]
    assert conv.sessions[1].occurred_at == datetime(2023, 5, 21, 18, 14, tzinfo=UTC)
    # The empty turn is skipped, and ids keep their original positions.
    assert [t.id for t in conv.sessions[1].turns] == ["answer_1:1", "answer_1:2"]
    assert [t.speaker for t in conv.sessions[0].turns] == ["user", "assistant"]
    assert data.counts["empty_turns_skipped"] == 2
    assert data.counts["abstention_questions"] == 1
    assert data.counts["questions_without_has_answer_turns"] == 1


def test_longmemeval_question_filter_keeps_file_order(tmp_path: Path) -> None:
    path = write_json(tmp_path / "lme.json", [lme_item("q1"), lme_item("q2"), lme_item("q3")])
    data = load_longmemeval(path, question_ids=["q3", "q1"])
    assert [q.id for q in data.questions] == ["q1", "q3"]
    assert [c.id for c in data.conversations] == ["q1", "q3"]
    with pytest.raises(InvalidInput, match="zzz"):
        load_longmemeval(path, question_ids=["zzz"])


def test_longmemeval_date_format() -> None:
    assert parse_longmemeval_date("2023/04/23 (Sun) 18:14") == datetime(
        2023, 4, 23, 18, 14, tzinfo=UTC
    )

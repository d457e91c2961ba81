"""Loaders for LoCoMo and LongMemEval in their official JSON formats, into one plain shape.

Only the raw dialogue, the questions, their answers and their evidence ids are read. The
derived LoCoMo fields (``observation``, ``session_summary``, ``event_summary``) are never
touched: they summarise the conversation, so giving them to an arm would be cheating.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nmafc.errors import InvalidInput

LOCOMO_CATEGORIES: dict[str, str] = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}

_SESSION_KEY = re.compile(r"session_(\d+)")
_EVIDENCE_ID = re.compile(r"D(\d+):(\d+)")
_WELL_FORMED_ID = re.compile(r"D\d+:\d+")
_LOCOMO_DATE_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")
_LONGMEMEVAL_DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"


@dataclass(frozen=True, slots=True)
class DialogTurn:
    """One turn of the source dialogue; ``id`` is what evidence and reports name it by."""

    id: str
    speaker: str
    role: str
    text: str
    captions: tuple[str, ...] = ()
    has_answer: bool = False

    def full_text(self) -> str:
        """Text plus image captions, written the way the engine's Message writes them."""
        if not self.captions:
            return self.text
        shared = " ".join(f"[shared an image: {c}]" for c in self.captions)
        return f"{self.text} {shared}".strip()


@dataclass(frozen=True, slots=True)
class Session:
    """A dated run of turns."""

    id: str
    occurred_at: datetime
    turns: tuple[DialogTurn, ...]

    @property
    def date_label(self) -> str:
        """The date as rendered in baseline contexts, e.g. ``8 May 2023``."""
        return f"{self.occurred_at.day} {self.occurred_at:%B %Y}"


@dataclass(frozen=True, slots=True)
class Conversation:
    """Sessions in chronological (file) order."""

    id: str
    sessions: tuple[Session, ...]

    def turns(self) -> Iterator[tuple[Session, DialogTurn]]:
        """Every turn with its session, in order."""
        for session in self.sessions:
            for turn in session.turns:
                yield session, turn

    @property
    def turn_count(self) -> int:
        """Number of turns across sessions."""
        return sum(len(s.turns) for s in self.sessions)


@dataclass(frozen=True, slots=True)
class Question:
    """A question with its gold answer and the turn ids (resolved) that support it."""

    id: str
    conversation_id: str
    question: str
    answer: str
    category: str
    evidence: tuple[str, ...]
    answer_sessions: tuple[str, ...] = ()
    abstention: bool = False
    asked_at: datetime | None = None  # LongMemEval's question_date; LoCoMo gives none


@dataclass(slots=True)
class Dataset:
    """Conversations, their questions, and counts of what loading kept and dropped."""

    conversations: list[Conversation]
    questions: list[Question]
    counts: dict[str, Any] = field(default_factory=dict)


def read_json(path: Path) -> Any:
    """Parse a JSON file, gunzipping it when it starts with the gzip magic bytes."""
    if not path.is_file():
        raise InvalidInput(f"No data file at {path}.", fix="Pass --data with the dataset's path.")
    with path.open("rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
    if gzipped:
        with gzip.open(path, "rt", encoding="utf-8") as text:
            return json.load(text)
    with path.open(encoding="utf-8") as text:
        return json.load(text)


def parse_locomo_date(value: str) -> datetime:
    """``1:56 pm on 8 May, 2023`` → an aware UTC datetime."""
    cleaned = " ".join(value.split())
    for fmt in _LOCOMO_DATE_FORMATS:
        try:
            return datetime.strptime(cleaned, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo session date {value!r}")


def parse_longmemeval_date(value: str) -> datetime:
    """``2023/04/23 (Sun) 18:14`` → an aware UTC datetime."""
    return datetime.strptime(value.strip(), _LONGMEMEVAL_DATE_FORMAT).replace(tzinfo=UTC)


def parse_evidence(raw: Sequence[object], known: set[str], counts: Counter[str]) -> list[str]:
    """Turn ids named by ``raw`` that exist in ``known``, in order; ``counts`` tallies drops."""
    kept: list[str] = []
    for item in raw:
        text = str(item)
        counts["evidence_raw"] += 1
        found = [f"D{int(a)}:{int(b)}" for a, b in _EVIDENCE_ID.findall(text)]
        if not _WELL_FORMED_ID.fullmatch(text.strip()):
            # 'D8:6; D9:17' or 'D1:2 D1:3' still name turns; 'D' and 'D:11:26' name none.
            counts["evidence_malformed"] += 1
            counts["evidence_recovered_from_malformed"] += len(found)
            if not found:
                counts["evidence_dropped_unparseable"] += 1
        for turn_id in found:
            if turn_id not in known:
                counts["evidence_dropped_unresolved"] += 1
            elif turn_id not in kept:
                kept.append(turn_id)
    return kept


def _locomo_sessions(conv: dict[str, Any], counts: Counter[str]) -> list[Session]:
    numbered = [
        (int(m.group(1)), key)
        for key in conv
        if (m := _SESSION_KEY.fullmatch(key)) and isinstance(conv[key], list)
    ]
    sessions: list[Session] = []
    # Text order would put session_10 before session_2: sort by N as an integer.
    for number, key in sorted(numbered):
        date_value = conv.get(f"{key}_date_time")
        if not isinstance(date_value, str):
            raise ValueError(f"{key} has no {key}_date_time")
        turns: list[DialogTurn] = []
        for raw in conv[key]:
            caption = str(raw.get("blip_caption") or "").strip()
            text = str(raw.get("text") or "")
            if not text.strip() and not caption:
                counts["empty_turns_skipped"] += 1  # the engine refuses empty messages
                continue
            speaker = str(raw.get("speaker") or "unknown")
            turns.append(
                DialogTurn(
                    id=str(raw["dia_id"]),
                    speaker=speaker,
                    role="user",
                    text=text,
                    captions=(caption,) if caption else (),
                )
            )
        if turns:
            sessions.append(
                Session(f"session_{number}", parse_locomo_date(date_value), tuple(turns))
            )
    return sessions


def load_locomo(path: Path, conversations: Sequence[str] | None = None) -> Dataset:
    """Read a LoCoMo file (official ``locomo10.json`` format), optionally a few samples only."""
    samples = read_json(path)
    wanted = list(conversations or [])
    available = [str(s["sample_id"]) for s in samples]
    missing = [c for c in wanted if c not in available]
    if missing:
        raise InvalidInput(
            f"Unknown conversation id(s) {missing}.", fix=f"Use ids from the file: {available}."
        )
    counts: Counter[str] = Counter()
    convs: list[Conversation] = []
    questions: list[Question] = []
    by_category: Counter[str] = Counter()
    no_evidence: Counter[str] = Counter()
    for sample in samples:
        sample_id = str(sample["sample_id"])
        if wanted and sample_id not in wanted:
            continue
        sessions = _locomo_sessions(sample["conversation"], counts)
        conv = Conversation(sample_id, tuple(sessions))
        convs.append(conv)
        known = {t.id for _, t in conv.turns()}
        for index, qa in enumerate(sample.get("qa", [])):
            category = str(qa["category"])
            # Category 5 carries `adversarial_answer` instead of `answer`; answers may be ints.
            answer = qa.get("answer", qa.get("adversarial_answer", ""))
            evidence = parse_evidence(qa.get("evidence") or [], known, counts)
            by_category[category] += 1
            if not evidence:
                no_evidence[category] += 1
            questions.append(
                Question(
                    id=f"{sample_id}:q{index}",
                    conversation_id=sample_id,
                    question=str(qa["question"]),
                    answer="" if answer is None else str(answer),
                    category=category,
                    evidence=tuple(evidence),
                )
            )
    data: dict[str, Any] = {
        "conversations": len(convs),
        "sessions": sum(len(c.sessions) for c in convs),
        "turns": sum(c.turn_count for c in convs),
        "questions": len(questions),
        "questions_by_category": dict(sorted(by_category.items())),
        "questions_without_resolvable_evidence": dict(sorted(no_evidence.items())),
    }
    for key in (
        "evidence_raw",
        "evidence_malformed",
        "evidence_recovered_from_malformed",
        "evidence_dropped_unparseable",
        "evidence_dropped_unresolved",
        "empty_turns_skipped",
    ):
        data[key] = counts[key]
    return Dataset(convs, questions, data)


def load_longmemeval(
    path: Path, limit: int | None = None, question_ids: Sequence[str] | None = None
) -> Dataset:
    """Read LongMemEval (JSON list, maybe gzipped); each question becomes its own haystack.

    ``question_ids`` keeps those only (in file order); ``limit`` then keeps the first N.
    """
    items = read_json(path)
    if question_ids:
        available = {str(item["question_id"]) for item in items}
        missing = [q for q in question_ids if q not in available]
        if missing:
            raise InvalidInput(
                f"Unknown question id(s) {missing}.",
                fix="Use `question_id` values from the file.",
            )
        keep = set(question_ids)
        items = [item for item in items if str(item["question_id"]) in keep]
    if limit is not None:
        items = items[:limit]
    counts: Counter[str] = Counter()
    by_type: Counter[str] = Counter()
    convs: list[Conversation] = []
    questions: list[Question] = []
    for item in items:
        qid = str(item["question_id"])
        sessions: list[Session] = []
        evidence: list[str] = []
        for sid, date, raw_turns in zip(
            item["haystack_session_ids"],
            item["haystack_dates"],
            item["haystack_sessions"],
            strict=True,
        ):
            turns: list[DialogTurn] = []
            for index, raw in enumerate(raw_turns):
                content = str(raw.get("content") or "")
                if not content.strip():
                    counts["empty_turns_skipped"] += 1
                    continue
                # Ids keep the original position so they stay stable when a turn is skipped.
                turn = DialogTurn(
                    id=f"{sid}:{index}",
                    speaker=str(raw["role"]),
                    role=str(raw["role"]),
                    text=content,
                    has_answer=bool(raw.get("has_answer", False)),
                )
                turns.append(turn)
                if turn.has_answer and turn.id not in evidence:
                    evidence.append(turn.id)
            if turns:
                sessions.append(Session(str(sid), parse_longmemeval_date(str(date)), tuple(turns)))
        convs.append(Conversation(qid, tuple(sessions)))
        abstention = qid.endswith("_abs")
        by_type[str(item["question_type"])] += 1
        counts["abstention"] += abstention
        counts["without_answer_turns"] += not evidence
        questions.append(
            Question(
                id=qid,
                conversation_id=qid,
                question=str(item["question"]),
                answer=str(item["answer"]),
                category=str(item["question_type"]),
                evidence=tuple(evidence),
                answer_sessions=tuple(str(s) for s in item.get("answer_session_ids") or []),
                abstention=abstention,
                asked_at=(
                    parse_longmemeval_date(str(item["question_date"]))
                    if item.get("question_date")
                    else None
                ),
            )
        )
    data: dict[str, Any] = {
        "questions": len(questions),
        "questions_by_type": dict(sorted(by_type.items())),
        "abstention_questions": counts["abstention"],
        "questions_without_has_answer_turns": counts["without_answer_turns"],
        "sessions": sum(len(c.sessions) for c in convs),
        "turns": sum(c.turn_count for c in convs),
        "empty_turns_skipped": counts["empty_turns_skipped"],
    }
    return Dataset(convs, questions, data)

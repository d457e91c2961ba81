"""The session-document baseline: one vector per session from its user turns, ranked by cosine,
its turns packed within the budget like every other arm's."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nmafc.embedding.base import Embedder
from nmafc.embedding.tokens import default_counter
from nmafc.evaluation import run_locomo, run_longmemeval
from nmafc.evaluation.loaders import Conversation, DialogTurn, Session
from nmafc.evaluation.session_arm import SessionsArm, session_document

START = datetime(2024, 3, 4, 9, 30, tzinfo=UTC)

# Three sessions on unrelated topics, each with a few turns of small talk around it.
TOPICS = {
    "session_1": [
        ("Ines", "user", "My grandmother left me her old sewing machine."),
        ("Tomas", "user", "Does it still work?"),
        ("Ines", "user", "Yes, I hemmed three pairs of trousers on it last night."),
        ("Tomas", "user", "Nice."),
    ],
    "session_2": [
        ("Ines", "user", "We finally climbed the north ridge of the mountain."),
        ("Tomas", "user", "How long did the ascent take?"),
        ("Ines", "user", "Nine hours, and the glacier crossing was the scariest part."),
    ],
    "session_3": [
        ("Ines", "user", "I am learning to bake sourdough bread."),
        ("Tomas", "user", "Is your starter alive?"),
        ("Ines", "user", "It bubbles every morning; I feed it rye flour."),
        ("Tomas", "user", "Save me a loaf."),
    ],
}


def conversation() -> Conversation:
    sessions = []
    for number, (sid, turns) in enumerate(TOPICS.items(), start=1):
        dialog = tuple(
            DialogTurn(f"D{number}:{i + 1}", speaker, role, text)
            for i, (speaker, role, text) in enumerate(turns)
        )
        sessions.append(Session(sid, START + timedelta(days=7 * number), dialog))
    return Conversation("conv-s", tuple(sessions))


@pytest.fixture
def arm(shared_embedder: Embedder) -> SessionsArm:
    built = SessionsArm(shared_embedder, default_counter())
    built.ingest(conversation())
    return built


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("What did Ines repair with her grandmother's machine?", "session_1"),
        ("How long did the climb of the north ridge take?", "session_2"),
        ("What flour does Ines feed her sourdough starter?", "session_3"),
    ],
)
def test_the_session_about_the_question_ranks_first(
    arm: SessionsArm, question: str, first: str
) -> None:
    got = arm.retrieve("conv-s", question, 1000)
    number = first.removeprefix("session_")
    assert got.ranked_turns[0] == f"D{number}:1"
    # The whole ranking is every turn once, the best session's turns first, in order.
    assert got.ranked_turns[: len(TOPICS[first])] == [
        f"D{number}:{i + 1}" for i in range(len(TOPICS[first]))
    ]
    assert sorted(got.ranked_turns) == sorted(t.id for _, t in conversation().turns())


def test_a_large_budget_holds_every_session_best_first_under_its_date(arm: SessionsArm) -> None:
    got = arm.retrieve("conv-s", "How long did the climb of the north ridge take?", 1000)
    blocks = got.context.split("\n\n")
    assert blocks[0].splitlines() == [
        "[18 March 2024]",
        "Ines: We finally climbed the north ridge of the mountain.",
        "Tomas: How long did the ascent take?",
        "Ines: Nine hours, and the glacier crossing was the scariest part.",
    ]
    assert len(blocks) == 3
    assert len(got.turn_ids) == 11
    assert got.tokens == default_counter().count(got.context)


@pytest.mark.parametrize("budget", [25, 40, 60, 90])
def test_the_context_never_exceeds_the_budget_and_fills_from_the_best_session(
    arm: SessionsArm, budget: int
) -> None:
    counter = default_counter()
    got = arm.retrieve("conv-s", "What flour does Ines feed her sourdough starter?", budget)
    assert got.tokens == counter.count(got.context) <= budget
    assert got.turn_ids, "every budget here fits the date and at least one turn"
    assert got.turn_ids[0].startswith("D3:")
    # A turn left out is one that did not fit in what was left of the budget.
    chosen = set(got.turn_ids)
    best = [f"D3:{i + 1}" for i in range(4)]
    lines = [f"{s}: {t}" for s, _, t in TOPICS["session_3"]]
    header = counter.count("[25 March 2024]")
    for turn_id, line in zip(best, lines, strict=True):
        if turn_id not in chosen:
            assert got.tokens + counter.count(line) + (0 if chosen else header) > budget


def test_only_user_turns_make_the_session_vector(shared_embedder: Embedder) -> None:
    def turns(sid: str, pairs: list[tuple[str, str]]) -> Session:
        dialog = tuple(
            DialogTurn(f"{sid}:{i}", role, role, text) for i, (role, text) in enumerate(pairs)
        )
        return Session(sid, START, dialog)

    chatty = turns(
        "chatty",
        [
            ("user", "Give me a weekend plan."),
            ("assistant", "Visit the lighthouse, then take a ferry to watch whales and seals."),
        ],
    )
    owner = turns(
        "owner",
        [("user", "I saw whales from the ferry yesterday."), ("assistant", "Lucky you!")],
    )
    assert session_document(chatty) == "Give me a weekend plan."
    arm = SessionsArm(shared_embedder, default_counter())
    arm.ingest(Conversation("q", (chatty, owner)))
    got = arm.retrieve("q", "Where did I see whales?", 1000)
    assert got.ranked_turns[0] == "owner:0"


def test_the_sessions_arm_runs_paired_with_nmafc_in_both_benchmarks(
    tmp_path: Path, shared_embedder: Embedder
) -> None:
    from .test_runner_smoke import lme_item, tiny_locomo

    data = tiny_locomo(tmp_path / "locomo.json")
    summary = run_locomo(
        data, out=tmp_path / "loc", arms="nmafc,sessions,bm25", embedder=shared_embedder
    )
    assert list(summary["arms"]) == ["nmafc", "sessions", "bm25"]
    assert set(summary["pairs"]) == {"nmafc_vs_sessions", "nmafc_vs_bm25", "sessions_vs_bm25"}
    sessions = summary["arms"]["sessions"]
    assert sessions["full_evidence_hit"]["all"] == 1.0  # 7 turns fit in 1,000 tokens
    assert sessions["mean_tokens"] <= 1000
    assert sessions["embed_texts"] == 2  # one vector per session
    markdown = (tmp_path / "loc" / "summary.md").read_text(encoding="utf-8")
    assert "| category | nmafc | sessions | bm25 |" in markdown
    assert "nmafc vs sessions" in markdown
    assert summary["settings"]["arm_settings"]["sessions"]["unit"] == "session"

    path = tmp_path / "lme.json"
    path.write_text(json.dumps([lme_item("k1")]), encoding="utf-8")
    lme = run_longmemeval(
        path, out=tmp_path / "lme", arms="nmafc,sessions", embedder=shared_embedder
    )
    assert lme["arms"]["sessions"]["session_recall_any@5"]["all"] == 1.0
    assert set(lme["pairs"]) == {"nmafc_vs_sessions"}
    line = json.loads((tmp_path / "lme" / "questions.jsonl").read_text().splitlines()[0])
    assert line["arms"]["sessions"]["ranked_sessions"][0] == "ans"

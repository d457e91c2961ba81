"""End to end: the runners on tiny synthetic datasets, through all three arms, into tmp_path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nmafc.core.retrieval import preset
from nmafc.embedding.base import Embedder
from nmafc.evaluation import run_locomo, run_longmemeval

ARMS = ["nmafc", "rag", "bm25"]
ARM_KEYS = {"context", "turn_ids", "tokens"}
PNG = b"\x89PNG\r\n\x1a\n"


def tiny_locomo(path: Path) -> Path:
    conversation = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "I adopted a puppy named Rex."},
            {"speaker": "Melanie", "dia_id": "D1:2", "text": "Lovely! What breed is he?"},
            {"speaker": "Caroline", "dia_id": "D1:3", "text": "A beagle. He chews shoes."},
            {
                "speaker": "Melanie",
                "dia_id": "D1:4",
                "text": "Look at my garden.",
                "blip_caption": "a photo of tomatoes",
            },
        ],
        "session_2_date_time": "10:04 am on 20 May, 2023",
        "session_2": [
            {"speaker": "Caroline", "dia_id": "D2:1", "text": "I started pottery classes today."},
            {"speaker": "Melanie", "dia_id": "D2:2", "text": "Fun! I ran a marathon."},
            {"speaker": "Caroline", "dia_id": "D2:3", "text": "I made a blue bowl."},
        ],
    }
    qa = [
        {
            "question": "What is the name of Caroline's puppy?",
            "answer": "Rex",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "When did Caroline start pottery classes?",
            "answer": "20 May 2023",
            "evidence": ["D2:1", "D"],
            "category": 2,
        },
        {
            "question": "What is the name of Melanie's puppy?",
            "adversarial_answer": "Rex",
            "evidence": ["D1:1"],
            "category": 5,
        },
    ]
    sample = {"sample_id": "conv-x", "conversation": conversation, "qa": qa}
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_locomo_run_writes_every_output_in_the_specified_shape(
    tmp_path: Path, shared_embedder: Embedder
) -> None:
    data = tiny_locomo(tmp_path / "locomo.json")
    out = tmp_path / "run"
    run_locomo(data, out=out, arms="nmafc,rag,bm25", budget=1000, embedder=shared_embedder)

    assert sorted(p.name for p in out.iterdir()) == [
        "per_category.png",
        "questions.jsonl",
        "summary.json",
        "summary.md",
    ]
    lines = read_lines(out / "questions.jsonl")
    assert [line["id"] for line in lines] == ["conv-x:q0", "conv-x:q1", "conv-x:q2"]
    known = {"D1:1", "D1:2", "D1:3", "D1:4", "D2:1", "D2:2", "D2:3"}
    for line in lines:
        assert set(line) == {"id", "category", "question", "answer", "evidence", "arms"}
        assert list(line["arms"]) == ARMS
        for entry in line["arms"].values():
            assert set(entry) == ARM_KEYS
            assert isinstance(entry["context"], str)
            assert set(entry["turn_ids"]) <= known
            assert 0 <= entry["tokens"] <= 1000
    assert lines[1]["evidence"] == ["D2:1"]
    assert lines[1]["category"] == "2"
    bm25 = lines[0]["arms"]["bm25"]
    assert bm25["turn_ids"][0] == "D1:1"
    assert "[8 May 2023] Caroline: I adopted a puppy named Rex." in bm25["context"]

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert set(summary) >= {"arms", "pairs", "data", "settings"}
    assert list(summary["arms"]) == ARMS
    for arm in summary["arms"].values():
        assert set(arm["full_evidence_hit"]) == {"all", "1", "2", "3", "4"}
        assert set(arm["evidence_recall"]) == {"all", "1", "2", "3", "4"}
        assert set(arm["answer_reachable"]) == {"all", "1", "2", "4"}
        assert set(arm["adversarial"]) >= {"full_evidence_hit", "evidence_recall"}
        for key in ("mean_tokens", "p95_tokens", "ingest_turns_per_s", "recall_ms_p50"):
            assert isinstance(arm[key], int | float)
        assert arm["recall_ms_p99"] >= arm["recall_ms_p50"]
        assert arm["ingest_turns"] == 7
    bm25_summary = summary["arms"]["bm25"]
    assert bm25_summary["full_evidence_hit"]["4"] == 1.0
    assert bm25_summary["answer_reachable"]["4"] == 1.0
    assert bm25_summary["full_evidence_hit"]["1"] is None  # no category-1 question
    nmafc = summary["arms"]["nmafc"]
    assert nmafc["embed_texts"] > 0
    assert 0 <= nmafc["non_embedding_share"] <= 1
    assert set(summary["pairs"]) == {"nmafc_vs_rag", "nmafc_vs_bm25", "rag_vs_bm25"}
    for pair in summary["pairs"].values():
        assert set(pair) == {"b", "c", "p"}
        assert 0 <= pair["p"] <= 1
    assert summary["data"]["evidence_dropped_unparseable"] == 1
    assert summary["data"]["questions"] == 3
    settings = summary["settings"]
    assert settings["budget"] == 1000
    assert settings["retrieval"] == preset(settings["preset"]).model_dump()
    assert settings["rag"] == {"window": 4, "stride": 2}
    assert settings["bm25"] == {"k1": 1.2, "b": 0.75}

    markdown = (out / "summary.md").read_text(encoding="utf-8")
    assert "| category | nmafc | rag | bm25 |" in markdown
    assert "McNemar" in markdown
    assert "reinforce=False" in markdown
    assert f"nmafc eval locomo --data {data.resolve()}" in markdown
    assert (out / "per_category.png").read_bytes().startswith(PNG)


def test_locomo_run_with_several_budgets_adds_budget_fields_and_chart(
    tmp_path: Path, shared_embedder: Embedder
) -> None:
    data = tiny_locomo(tmp_path / "locomo.json")
    out = tmp_path / "budgets"
    summary = run_locomo(
        data, out=out, arms=["rag", "bm25"], budget="20,1000", embedder=shared_embedder
    )
    assert (out / "accuracy_vs_budget.png").read_bytes().startswith(PNG)
    lines = read_lines(out / "questions.jsonl")
    assert [(line["id"], line["arms"]["rag"]["budget"]) for line in lines[:2]] == [
        ("conv-x:q0", 20),
        ("conv-x:q0", 1000),
    ]
    assert len(lines) == 6
    assert all(line["arms"]["bm25"]["tokens"] <= 20 for line in lines[::2])
    assert summary["settings"]["budget"] == 1000
    assert set(summary["budgets"]) == {"20", "1000"}
    assert summary["arms"] == summary["budgets"]["1000"]["arms"]


def lme_item(qid: str) -> dict[str, Any]:
    sessions: list[list[dict[str, Any]]] = [
        [
            {"role": "user", "content": f"Tell me about volcano number {i}."},
            {"role": "assistant", "content": f"Volcano {i} is tall and erupts rarely."},
        ]
        for i in range(6)
    ]
    sessions.insert(
        3,
        [
            {"role": "user", "content": "I bought a red kayak in Oslo.", "has_answer": True},
            {"role": "assistant", "content": "Enjoy paddling!"},
        ],
    )
    return {
        "question_id": qid,
        "question_type": "single-session-user",
        "question": "Where did I buy my kayak?",
        "question_date": "2023/06/01 (Thu) 10:00",
        "answer": "Oslo",
        "answer_session_ids": ["ans"],
        "haystack_dates": [f"2023/05/{10 + i:02d} (Wed) 09:00" for i in range(7)],
        "haystack_session_ids": ["s0", "s1", "s2", "ans", "s3", "s4", "s5"],
        "haystack_sessions": sessions,
    }


def test_longmemeval_run_scores_sessions_and_reports_abstention_apart(
    tmp_path: Path, shared_embedder: Embedder
) -> None:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([lme_item("k1"), lme_item("k2_abs"), lme_item("k3")]))
    out = tmp_path / "lme"
    summary = run_longmemeval(path, out=out, arms=ARMS, limit=2, embedder=shared_embedder)
    assert {p.name for p in out.iterdir()} == {
        "per_category.png",
        "questions.jsonl",
        "summary.json",
        "summary.md",
    }
    lines = read_lines(out / "questions.jsonl")
    assert [(line["id"], line["abstention"]) for line in lines] == [
        ("k1", False),
        ("k2_abs", True),
    ]
    assert lines[0]["evidence"] == ["ans:0"]
    assert lines[0]["arms"]["bm25"]["ranked_sessions"][0] == "ans"
    bm25 = summary["arms"]["bm25"]
    assert bm25["session_recall_any@5"] == {"all": 1.0, "single-session-user": 1.0}
    assert bm25["turn_recall@10"]["all"] == 1.0
    assert bm25["abstention"]["questions"] == 1
    assert bm25["questions_scored"]["all"] == 1
    assert set(summary["arms"]["nmafc"]) >= {"session_recall_all@5", "session_recall_any@10"}
    assert summary["data"]["questions"] == 2
    assert summary["command"].endswith("--limit 2")


def test_unknown_arm_or_budget_is_refused_before_any_work(tmp_path: Path) -> None:
    from nmafc.errors import InvalidInput

    data = tiny_locomo(tmp_path / "locomo.json")
    with pytest.raises(InvalidInput, match="arm"):
        run_locomo(data, out=tmp_path / "x", arms="nmafc,gpt")
    with pytest.raises(InvalidInput, match="Budget"):
        run_locomo(data, out=tmp_path / "x", budget="0")
    assert not (tmp_path / "x").exists()

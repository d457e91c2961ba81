"""Aggregation into summary numbers, the McNemar pairs, and the chart dependency check."""

from __future__ import annotations

import sys

import pytest

from nmafc.errors import MissingExtra
from nmafc.evaluation import charts
from nmafc.evaluation.arms import Retrieval
from nmafc.evaluation.loaders import Question
from nmafc.evaluation.scoring import (
    IngestTiming,
    Outcome,
    locomo_arm,
    locomo_scored_hit,
    mcnemar_pairs,
)


def outcome(arm: str, qid: str, category: str, turn_ids: list[str], tokens: int = 10) -> Outcome:
    question = Question(qid, "c", "q?", "Rex the beagle", category, ("D1:1", "D1:2"))
    context = "Rex is a beagle" if "D1:1" in turn_ids else ""
    return Outcome(question, arm, 1000, Retrieval(context, turn_ids, tokens, turn_ids), 2.0)


def test_locomo_arm_aggregates_by_category_with_adversarial_apart() -> None:
    outs = [
        outcome("a", "q1", "1", ["D1:1", "D1:2"], tokens=100),
        outcome("a", "q2", "1", ["D1:1"], tokens=200),
        outcome("a", "q3", "4", [], tokens=300),
        outcome("a", "q4", "5", ["D1:1", "D1:2"], tokens=400),
    ]
    timing = IngestTiming()
    timing.add(0.5, 4, 400, (0.25, 8))
    timing.add(1.5, 6, 600, (1.25, 12))
    summary = locomo_arm(outs, timing)
    assert summary["full_evidence_hit"] == {"all": 0.3333, "1": 0.5, "2": None, "3": None, "4": 0.0}
    assert summary["evidence_recall"]["all"] == 0.5  # (1 + 0.5 + 0) / 3
    assert summary["answer_reachable"] == {"all": 0.6667, "1": 1.0, "2": None, "4": 0.0}
    assert summary["adversarial"] == {
        "full_evidence_hit": 1.0,
        "evidence_recall": 1.0,
        "questions": 1,
    }
    assert summary["mean_tokens"] == 250.0
    assert summary["p95_tokens"] == 385.0
    assert summary["ingest_turns_per_s"] == 5.0
    assert summary["ingest_chars_per_s"] == 500.0
    assert summary["ingest_seconds_median"] == 1.0
    assert summary["ingest_seconds_max"] == 1.5
    assert summary["embed_texts_per_turn"] == 2.0
    assert summary["non_embedding_share"] == 0.25


def test_mcnemar_pairs_use_scored_categories_only() -> None:
    hit, miss = ["D1:1", "D1:2"], ["D9:9"]
    per_arm = {
        "x": [
            outcome("x", "q1", "1", hit),
            outcome("x", "q2", "4", hit),
            outcome("x", "q3", "5", hit),
        ],
        "y": [
            outcome("y", "q1", "1", miss),
            outcome("y", "q2", "4", hit),
            outcome("y", "q3", "5", miss),
        ],
        "z": [
            outcome("z", "q1", "1", miss),
            outcome("z", "q2", "4", miss),
            outcome("z", "q3", "5", miss),
        ],
    }
    pairs = mcnemar_pairs(per_arm, locomo_scored_hit)
    assert list(pairs) == ["x_vs_y", "x_vs_z", "y_vs_z"]
    assert pairs["x_vs_y"] == {"b": 1, "c": 0, "p": 1.0}
    assert pairs["x_vs_z"] == {"b": 2, "c": 0, "p": 0.5}


def test_charts_name_the_extra_when_matplotlib_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    with pytest.raises(MissingExtra, match=r"nmafc\[bench\]"):
        charts.pyplot()

"""The answer-and-judge arm (J): each arm's context answers, a judge grades, through the real
provider client against a deterministic OpenAI-wire server on loopback (fake_llm.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nmafc.embedding.base import Embedder
from nmafc.errors import InvalidInput
from nmafc.evaluation import run_locomo, run_longmemeval
from nmafc.evaluation.judge import JudgeOptions, Usage, parse_label
from nmafc.settings.llm import LlmSettings

from .fake_llm import FakeLlm, running_fake_llm

ANSWER, JUDGE = "answer-m", "judge-m"


def dataset(path: Path) -> Path:
    conversation = {
        "speaker_a": "Priya",
        "speaker_b": "Leo",
        "session_1_date_time": "9:15 am on 3 June, 2023",
        "session_1": [
            {"speaker": "Priya", "dia_id": "D1:1", "text": "My brother moved to Valencia."},
            {"speaker": "Leo", "dia_id": "D1:2", "text": "Does he speak Spanish yet?"},
            {"speaker": "Priya", "dia_id": "D1:3", "text": "A little; he has lessons on Tuesdays."},
        ],
        "session_2_date_time": "6:40 pm on 17 June, 2023",
        "session_2": [
            {"speaker": "Leo", "dia_id": "D2:1", "text": "I finished building a wooden canoe."},
            {"speaker": "Priya", "dia_id": "D2:2", "text": "Did you paint it?"},
            {"speaker": "Leo", "dia_id": "D2:3", "text": "Dark green with a yellow stripe."},
        ],
    }
    qa = [
        {
            "question": "Where did Priya's brother move?",
            "answer": "Valencia",
            "evidence": ["D1:1"],
            "category": 4,
        },
        {
            "question": "When did Leo finish the canoe?",
            "answer": "17 June 2023",
            "evidence": ["D2:1"],
            "category": 2,
        },
        {  # an inference no context spells out: the fake judge says WRONG for every arm
            "question": "Would Leo enjoy a woodworking class?",
            "answer": "Likely yes, he builds boats",
            "evidence": ["D2:1"],
            "category": 3,
        },
        {  # adversarial: not judged, by the field's convention
            "question": "What colour is Priya's canoe?",
            "adversarial_answer": "dark green",
            "evidence": ["D2:3"],
            "category": 5,
        },
    ]
    path.write_text(json.dumps([{"sample_id": "conv-j", "conversation": conversation, "qa": qa}]))
    return path


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def llm(fake: FakeLlm) -> LlmSettings:
    return LlmSettings(base_url=fake.url, api_key="sk-eval-test", max_retries=0)


@pytest.mark.parametrize(
    ("verdict", "label"),
    [
        ('It names the same city. {"label": "CORRECT"}', "CORRECT"),
        ('{"label": "WRONG"}', "WRONG"),
        ('Not the same date.\n```json\n{"label":"wrong"}\n```', "WRONG"),
        ("The answer is CORRECT.", "CORRECT"),
        ("INCORRECT: it names another person. WRONG", "WRONG"),
        ("I first thought CORRECT but it is WRONG", None),  # both words: unreadable
        ("", None),
    ],
)
def test_the_judge_label_is_read_from_json_or_a_single_bare_word(
    verdict: str, label: str | None
) -> None:
    assert parse_label(verdict) == label


def test_cost_uses_the_answer_and_judge_prices_per_million_tokens() -> None:
    options = JudgeOptions(ANSWER, JUDGE, price_in=2.0, price_out=8.0, judge_price_in=1.0)
    cost = options.cost(Usage(1000, 100), Usage(500, 20))
    assert cost == pytest.approx((1000 * 2 + 100 * 8 + 500 * 1 + 20 * 8) / 1e6)
    assert JudgeOptions(ANSWER).cost(Usage(1000, 100), Usage(1, 1)) is None


def test_locomo_j_is_reported_per_arm_and_category_with_tokens_and_cost(
    tmp_path: Path, shared_embedder: Embedder
) -> None:
    data = dataset(tmp_path / "locomo.json")
    out = tmp_path / "run"
    options = JudgeOptions(ANSWER, JUDGE, price_in=2.0, price_out=8.0)
    with running_fake_llm(ANSWER, JUDGE) as fake:
        summary = run_locomo(
            data,
            out=out,
            arms="nmafc,bm25,sessions",
            embedder=shared_embedder,
            answer=options,
            llm=llm(fake),
            progress=False,
        )
    block = summary["answers"]
    assert block["settings"]["answer_model"] == ANSWER
    assert block["settings"]["judge_model"] == JUDGE
    assert "Gold answer: {gold}" in block["settings"]["judge_prompt"]  # recorded with the run
    # 3 arms x 3 judged questions (category 5 is not judged) x (answer + judge).
    assert len(fake.calls) == 18
    assert sorted({c.model for c in fake.calls}) == [ANSWER, JUDGE]
    assert all(c.headers["authorization"] == "Bearer sk-eval-test" for c in fake.calls)
    assert all(c.body["temperature"] == 0 for c in fake.calls)

    # Both baselines hold all six turns at 1,000 tokens: the quoted answers are CORRECT,
    # the inference is WRONG.
    for arm in ("bm25", "sessions"):
        got = block["arms"][arm]
        assert got["j"] == {
            "all": pytest.approx(2 / 3, abs=1e-4),
            "1": None,
            "2": 1.0,
            "3": 0.0,
            "4": 1.0,
        }
        assert got["questions_judged"] == {"all": 3, "1": 0, "2": 1, "3": 1, "4": 1}
        assert got["unreadable_verdicts"] == 0

    # Every arm's J is what its own contexts imply, and its tokens are what the upstream said.
    rows = lines(out / "questions.jsonl")
    judged_rows = [r for r in rows if r["category"] != "5"]
    assert all(
        "answer" not in arm for r in rows if r["category"] == "5" for arm in r["arms"].values()
    )
    for arm in ("nmafc", "bm25", "sessions"):
        expected = [
            str(r["answer"]).lower() in r["arms"][arm]["context"].lower() for r in judged_rows
        ]
        assert block["arms"][arm]["j"]["all"] == pytest.approx(sum(expected) / 3, abs=1e-4)
        answers = [r["arms"][arm]["answer"] for r in judged_rows]
        assert [a["label"] == "CORRECT" for a in answers] == expected
        assert all(
            a["text"] == r["arms"][arm]["context"]
            for a, r in zip(answers, judged_rows, strict=True)
        )
        total = block["arms"][arm]["tokens"]["total"]
        assert total["prompt"] == sum(
            a["answer_tokens"]["prompt"] + a["judge_tokens"]["prompt"] for a in answers
        )
        assert total["completion"] == sum(
            a["answer_tokens"]["completion"] + a["judge_tokens"]["completion"] for a in answers
        )
        assert block["arms"][arm]["cost_usd"] == pytest.approx(
            (total["prompt"] * 2.0 + total["completion"] * 8.0) / 1e6, abs=1e-6
        )
    assert sum(
        a["tokens"]["total"]["prompt"] + a["tokens"]["total"]["completion"]
        for a in block["arms"].values()
    ) == sum(c.prompt_tokens + c.completion_tokens for c in fake.calls)
    assert set(block["pairs"]) == {"nmafc_vs_bm25", "nmafc_vs_sessions", "bm25_vs_sessions"}
    assert block["pairs"]["bm25_vs_sessions"] == {"b": 0, "c": 0, "p": 1.0}

    markdown = (out / "summary.md").read_text(encoding="utf-8")
    assert "## J: answered from each arm's context" in markdown
    assert "| 3 open-domain (n=1) | " in markdown
    assert "McNemar exact test on J" in markdown
    assert "--answer-model answer-m --judge-model judge-m --price-in 2 --price-out 8" in markdown


def test_longmemeval_j_reports_abstention_apart(tmp_path: Path, shared_embedder: Embedder) -> None:
    from .test_runner_smoke import lme_item

    path = tmp_path / "lme.json"
    path.write_text(json.dumps([lme_item("k1"), lme_item("k2_abs")]))
    with running_fake_llm(ANSWER, ANSWER) as fake:
        summary = run_longmemeval(
            path,
            out=tmp_path / "lme",
            arms="bm25,sessions",
            embedder=shared_embedder,
            answer=JudgeOptions(ANSWER),
            llm=llm(fake),
            progress=False,
        )
    block = summary["answers"]
    assert len(fake.calls) == 2 * 2 * 2
    answer_prompts = [
        c.body["messages"][-1]["content"] for c in fake.calls if "Memory" in str(c.body)
    ]
    assert len(answer_prompts) == 4
    assert all(p.endswith("(Asked on 1 June 2023.)") for p in answer_prompts)  # question_date
    for arm in ("bm25", "sessions"):
        assert block["arms"][arm]["j"] == {"all": 1.0, "single-session-user": 1.0}  # "Oslo"
        assert block["arms"][arm]["apart"]["questions"] == 1
        assert block["arms"][arm]["cost_usd"] is None  # no prices: tokens only
    markdown = (tmp_path / "lme" / "summary.md").read_text(encoding="utf-8")
    assert "abstention questions (n=1)" in markdown
    assert "tokens only" in markdown


def test_without_answer_model_nothing_calls_the_llm(
    tmp_path: Path, shared_embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = dataset(tmp_path / "locomo.json")
    with running_fake_llm(ANSWER, JUDGE) as fake:
        monkeypatch.setenv("NMAFC_LLM_BASE_URL", fake.url)
        summary = run_locomo(
            data, out=tmp_path / "run", arms="bm25,sessions", embedder=shared_embedder
        )
    assert fake.calls == []
    assert "answers" not in summary
    assert all(
        "answer" not in arm
        for r in lines(tmp_path / "run" / "questions.jsonl")
        for arm in r["arms"].values()
    )
    assert "## J:" not in (tmp_path / "run" / "summary.md").read_text(encoding="utf-8")


def test_an_answer_model_without_a_configured_llm_is_refused_before_any_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "NMAFC_LLM_BASE_URL"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(InvalidInput, match="answer-model") as caught:
        run_locomo(
            dataset(tmp_path / "locomo.json"),
            out=tmp_path / "x",
            answer=JudgeOptions(ANSWER),
            llm=LlmSettings(),
        )
    assert "NMAFC_LLM_BASE_URL" in caught.value.fix
    assert not (tmp_path / "x").exists()


def test_the_cli_runs_the_judged_eval_against_the_configured_upstream(tmp_path: Path) -> None:
    data = dataset(tmp_path / "locomo.json")
    out = tmp_path / "cli"
    with running_fake_llm(ANSWER, JUDGE) as fake:
        env = {
            **os.environ,
            "NMAFC_LLM_BASE_URL": fake.url,
            "NMAFC_LLM_API_KEY": "sk-from-env",
            "NMAFC_DATA_DIR": str(tmp_path / "data"),
        }
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "nmafc.cli.main",
                "eval",
                "locomo",
                "--data",
                str(data),
                "--arms",
                "bm25,sessions",
                "--out",
                str(out),
                "--answer-model",
                ANSWER,
                "--judge-model",
                JUDGE,
                "--price-in",
                "0.15",
                "--price-out",
                "0.6",
                "--llm-concurrency",
                "2",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr
    assert len(fake.calls) == 2 * 3 * 2
    assert {c.headers["authorization"] for c in fake.calls} == {"Bearer sk-from-env"}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["answers"]["arms"]["sessions"]["j"]["all"] == pytest.approx(2 / 3, abs=1e-4)
    assert summary["answers"]["settings"]["usd_per_1m_tokens"]["answer_in"] == 0.15
    assert "## J: answered from each arm's context" in done.stdout


def test_a_judge_model_without_an_answer_model_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from nmafc.cli.main import main

    data = dataset(tmp_path / "locomo.json")
    code = main(
        ["eval", "locomo", "--data", str(data), "--out", str(tmp_path / "x"), "--judge-model", "j"]
    )
    assert code != 0
    assert "--answer-model" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()

"""Orchestration: load, ingest every conversation into every arm, retrieve, score, report.

Entry points for ``nmafc eval locomo`` and ``nmafc eval longmemeval``. Ingestion runs once
per arm and conversation; retrieval runs once per question, arm and budget.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nmafc.core.rendering import format_date
from nmafc.core.retrieval import preset as retrieval_preset
from nmafc.embedding.base import Embedder
from nmafc.embedding.factory import create_embedder
from nmafc.evaluation import charts, report, scoring
from nmafc.evaluation.arms import ARM_NAMES
from nmafc.evaluation.judge import Item, Judged, JudgeOptions, require_llm, run_judge
from nmafc.evaluation.loaders import Dataset, load_locomo, load_longmemeval
from nmafc.evaluation.metrics import answer_tokens, dedupe
from nmafc.evaluation.options import (
    MAIN_BUDGET,
    ArmOptions,
    build_arms,
    main_budget,
    parse_arms,
    parse_budgets,
    resolve_preset,
    split_list,
)
from nmafc.evaluation.progress import Progress
from nmafc.evaluation.scoring import (
    REACHABLE_CATEGORIES,
    SCORED_CATEGORIES,
    IngestTiming,
    Outcome,
)
from nmafc.evaluation.timing import TimedEmbedder
from nmafc.settings import load_settings
from nmafc.settings.llm import LlmSettings


@dataclass(slots=True)
class RunResult:
    """Every outcome, by budget then arm, plus each arm's ingest timing."""

    outcomes: dict[int, dict[str, list[Outcome]]]
    timings: dict[str, IngestTiming]
    embedder: str
    preset: str
    described: dict[str, dict[str, Any]] = field(default_factory=dict)


def execute(
    dataset: Dataset,
    names: Sequence[str],
    budgets: Sequence[int],
    preset: str,
    embedder: Embedder,
    options: ArmOptions,
    *,
    engine_per_conversation: bool,
    progress: bool = True,
    rank_sessions: bool = False,
) -> RunResult:
    """Ingest every conversation into every arm, then retrieve for every question and budget."""
    timed = TimedEmbedder(embedder)
    arms = build_arms(
        names, timed, preset, options, engine_per_conversation=engine_per_conversation
    )
    timings = {a.name: IngestTiming() for a in arms}
    outcomes: dict[int, dict[str, list[Outcome]]] = {b: {a.name: [] for a in arms} for b in budgets}
    session_of: dict[str, dict[str, str]] = {}
    try:
        with Progress("ingest", len(dataset.conversations) * len(arms), enabled=progress) as bar:
            for conv in dataset.conversations:
                if rank_sessions:
                    session_of[conv.id] = {t.id: s.id for s, t in conv.turns()}
                for arm in arms:
                    arm.prepare(conv.id)
                    seconds, texts = timed.snapshot()
                    start = time.perf_counter()
                    arm.ingest(conv)
                    elapsed = time.perf_counter() - start
                    after_seconds, after_texts = timed.snapshot()
                    timings[arm.name].add(
                        elapsed,
                        conv.turn_count,
                        sum(len(turn.text) for _, turn in conv.turns()),
                        (after_seconds - seconds, after_texts - texts),
                    )
                    bar.update(note=f"{arm.name} {conv.id}")
        total = len(dataset.questions) * len(budgets)
        with Progress("questions", total, enabled=progress) as bar:
            for question in dataset.questions:
                for budget in budgets:
                    for arm in arms:
                        start = time.perf_counter()
                        got = arm.retrieve(question.conversation_id, question.question, budget)
                        elapsed_ms = (time.perf_counter() - start) * 1000.0
                        sessions: tuple[str, ...] = ()
                        if rank_sessions:
                            lookup = session_of[question.conversation_id]
                            sessions = tuple(
                                dedupe(lookup[t] for t in got.ranked_turns if t in lookup)
                            )
                        outcomes[budget][arm.name].append(
                            Outcome(question, arm.name, budget, got, elapsed_ms, sessions)
                        )
                    bar.update()
        described = {a.name: a.describe() for a in arms}
    finally:
        for arm in arms:
            arm.close()
    return RunResult(outcomes, timings, embedder.model_name, preset, described)


def _settings_block(
    run: RunResult, budgets: Sequence[int], names: Sequence[str], options: ArmOptions
) -> dict[str, Any]:
    return {
        "budget": main_budget(budgets),
        "budgets": list(budgets),
        "arms": list(names),
        "preset": run.preset,
        "retrieval": retrieval_preset(run.preset).model_dump(),
        "rag": {"window": options.rag_window, "stride": options.rag_stride},
        "bm25": {"k1": options.bm25_k1, "b": options.bm25_b},
        "embedder": run.embedder,
        "token_counter": "WordPiece of the embedder vocabulary (default_counter())",
        "reinforce": False,
        "engine": run.described.get("nmafc", {}).get("engine"),
        "arm_settings": run.described,
    }


def _write(
    out: Path,
    dataset: Dataset,
    run: RunResult,
    budgets: Sequence[int],
    ranks: bool,
    judged: Mapping[tuple[str, str], Judged] | None = None,
) -> None:
    by_question: dict[tuple[str, int], list[Outcome]] = {}
    for budget, per_arm in run.outcomes.items():
        for outcomes in per_arm.values():
            for o in outcomes:
                by_question.setdefault((o.question.id, budget), []).append(o)
    lines = (
        report.question_line(
            by_question[(q.id, b)],
            with_budget=len(budgets) > 1,
            ranks=ranks,
            judged=judged if b == main_budget(budgets) else None,
        )
        for q in dataset.questions
        for b in budgets
    )
    report.write_jsonl(out / "questions.jsonl", lines)


def _own_embedder(embedder: Embedder | None) -> tuple[Embedder, bool]:
    if embedder is not None:
        return embedder, False
    settings = load_settings()
    return create_embedder(settings.embedding, cache_dir=settings.resolved_cache_dir()), True


def _llm_for(answer: JudgeOptions | None, llm: LlmSettings | None) -> LlmSettings | None:
    """The upstream settings a judged run uses, checked before any retrieval work."""
    if answer is None:
        return None
    resolved = llm or load_settings().llm
    require_llm(resolved)
    return resolved


def _judge(
    outcomes: Mapping[str, Sequence[Outcome]],
    wanted: Callable[[Outcome], bool],
    answer: JudgeOptions,
    llm: LlmSettings,
    progress: bool,
) -> dict[tuple[str, str], Judged]:
    """Answer and judge every wanted outcome of the main budget through the upstream LLM."""
    items = [
        Item(
            o.arm,
            o.question.id,
            o.question.question,
            o.question.answer,
            o.retrieval.context,
            format_date(o.question.asked_at) if o.question.asked_at else None,
        )
        for per_arm in outcomes.values()
        for o in per_arm
        if wanted(o)
    ]
    return run_judge(llm, items, answer, progress=progress)


def _judge_flags(answer: JudgeOptions | None) -> list[tuple[str, str | None]]:
    if answer is None:
        return []

    def price(value: float | None) -> str | None:
        return None if value is None else f"{value:g}"

    return [
        ("--answer-model", answer.answer_model),
        ("--judge-model", answer.judge_model),
        ("--price-in", price(answer.price_in)),
        ("--price-out", price(answer.price_out)),
        ("--judge-price-in", price(answer.judge_price_in)),
        ("--judge-price-out", price(answer.judge_price_out)),
    ]


def _command(kind: str, pairs: Sequence[tuple[str, str | None]]) -> str:
    parts = ["nmafc", "eval", kind]
    for flag, value in pairs:
        if value is not None:
            parts += [flag, shlex.quote(value)]
    return " ".join(parts)


def run_locomo(
    data: str | Path,
    *,
    out: str | Path,
    arms: str | Sequence[str] = ARM_NAMES,
    budget: int | str | Sequence[int] = MAIN_BUDGET,
    conversations: str | Sequence[str] | None = None,
    preset: str | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
    options: ArmOptions | None = None,
    answer: JudgeOptions | None = None,
    llm: LlmSettings | None = None,
) -> dict[str, Any]:
    """``nmafc eval locomo``: questions.jsonl, summary.json, summary.md and charts in ``out``.

    With ``answer``, every arm's context at the main budget also answers each question of
    categories 1–4 through the upstream LLM (``llm``, default: the configured one) and a
    judge grades it: the ``answers`` block of summary.json. Without it nothing calls an LLM.
    """
    names, budgets, preset_name = parse_arms(arms), parse_budgets(budget), resolve_preset(preset)
    options = options or ArmOptions()
    llm = _llm_for(answer, llm)
    wanted = split_list(conversations)
    dataset = load_locomo(Path(data), wanted or None)
    model, owned = _own_embedder(embedder)
    try:
        run = execute(
            dataset,
            names,
            budgets,
            preset_name,
            model,
            options,
            engine_per_conversation=True,
            progress=progress,
        )
    finally:
        if owned:
            model.close()
    per_budget = {
        b: {
            "arms": {a: scoring.locomo_arm(run.outcomes[b][a], run.timings[a]) for a in names},
            "pairs": scoring.mcnemar_pairs(run.outcomes[b], scoring.locomo_scored_hit),
        }
        for b in budgets
    }
    head = per_budget[main_budget(budgets)]
    data_block = dict(dataset.counts)
    data_block["categories"] = scoring.category_check(dataset.questions)
    data_block["answers_without_content_words"] = sum(
        1
        for q in dataset.questions
        if q.category in REACHABLE_CATEGORIES and not answer_tokens(q.answer)
    )
    settings = _settings_block(run, budgets, names, options)
    settings["conversations"] = [c.id for c in dataset.conversations]
    summary: dict[str, Any] = {
        "benchmark": "locomo",
        "arms": head["arms"],
        "pairs": head["pairs"],
        "data": data_block,
        "settings": settings,
        "command": _command(
            "locomo",
            [
                ("--data", str(Path(data).resolve())),
                ("--arms", ",".join(names)),
                ("--budget", ",".join(map(str, budgets))),
                ("--out", str(Path(out).resolve())),
                ("--conversations", ",".join(wanted) if wanted else None),
                ("--preset", preset_name),
                *_judge_flags(answer),
            ],
        ),
    }
    if len(budgets) > 1:
        summary["budgets"] = {str(b): per_budget[b] for b in budgets}
    judged: dict[tuple[str, str], Judged] | None = None
    if answer is not None and llm is not None:
        main = run.outcomes[main_budget(budgets)]
        judged = _judge(
            main, lambda o: o.question.category in SCORED_CATEGORIES, answer, llm, progress
        )
        summary["answers"] = scoring.j_block(
            main,
            judged,
            SCORED_CATEGORIES,
            {**answer.describe(), "budget": main_budget(budgets), "categories": "1-4"},
        )
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    _write(target, dataset, run, budgets, ranks=False, judged=judged)
    report.write_json(target / "summary.json", summary)
    (target / "summary.md").write_text(report.locomo_markdown(summary), encoding="utf-8")
    charts.locomo_charts(target, summary)
    return summary


def run_longmemeval(
    data: str | Path,
    *,
    out: str | Path,
    arms: str | Sequence[str] = ARM_NAMES,
    limit: int | None = None,
    questions: str | Sequence[str] | None = None,
    budget: int = MAIN_BUDGET,
    preset: str | None = None,
    embedder: Embedder | None = None,
    progress: bool = True,
    options: ArmOptions | None = None,
    answer: JudgeOptions | None = None,
    llm: LlmSettings | None = None,
) -> dict[str, Any]:
    """``nmafc eval longmemeval``: the same outputs, scored by session and turn rank.

    ``questions`` keeps only those question ids (in file order), e.g. a few of every type.

    With ``answer``, every question is also answered from each arm's context and judged
    (abstention questions reported apart), as :func:`run_locomo` does.
    """
    names, budgets, preset_name = parse_arms(arms), parse_budgets(budget), resolve_preset(preset)
    options = options or ArmOptions()
    llm = _llm_for(answer, llm)
    wanted = split_list(questions)
    dataset = load_longmemeval(Path(data), limit, wanted or None)
    model, owned = _own_embedder(embedder)
    try:
        run = execute(
            dataset,
            names,
            budgets,
            preset_name,
            model,
            options,
            engine_per_conversation=False,
            progress=progress,
            rank_sessions=True,
        )
    finally:
        if owned:
            model.close()
    types = list(dataset.counts["questions_by_type"])
    outcomes = run.outcomes[budgets[0]]
    settings = _settings_block(run, budgets, names, options)
    settings["limit"] = limit
    settings["questions"] = [q.id for q in dataset.questions] if wanted else None
    summary: dict[str, Any] = {
        "benchmark": "longmemeval",
        "arms": {a: scoring.longmemeval_arm(outcomes[a], run.timings[a], types) for a in names},
        "pairs": scoring.mcnemar_pairs(outcomes, scoring.lme_main_hit),
        "data": dict(dataset.counts),
        "settings": settings,
        "command": _command(
            "longmemeval",
            [
                ("--data", str(Path(data).resolve())),
                ("--arms", ",".join(names)),
                ("--out", str(Path(out).resolve())),
                ("--limit", None if limit is None else str(limit)),
                ("--questions", ",".join(wanted) if wanted else None),
                # Flags beyond the documented ones appear only when they differ from defaults.
                ("--budget", None if budget == MAIN_BUDGET else str(budget)),
                ("--preset", preset),
                *_judge_flags(answer),
            ],
        ),
    }
    judged: dict[tuple[str, str], Judged] | None = None
    if answer is not None and llm is not None:
        judged = _judge(outcomes, lambda o: True, answer, llm, progress)
        summary["answers"] = scoring.j_block(
            outcomes,
            judged,
            types,
            {**answer.describe(), "budget": budgets[0], "categories": "every question type"},
            apart=lambda q: q.abstention,
        )
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    _write(target, dataset, run, budgets, ranks=True, judged=judged)
    report.write_json(target / "summary.json", summary)
    (target / "summary.md").write_text(report.longmemeval_markdown(summary), encoding="utf-8")
    charts.longmemeval_charts(target, summary)
    return summary

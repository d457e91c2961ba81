"""Writing a run: questions.jsonl, summary.json and summary.md (charts are in charts.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nmafc.evaluation.judge import Judged, judged_line
from nmafc.evaluation.loaders import LOCOMO_CATEGORIES
from nmafc.evaluation.scoring import REACHABLE_CATEGORIES, SCORED_CATEGORIES, Outcome


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> int:
    """One JSON object per line; returns the number of lines."""
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def write_json(path: Path, value: Any) -> None:
    """Pretty JSON with a trailing newline."""
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def question_line(
    outcomes: Sequence[Outcome],
    *,
    with_budget: bool,
    ranks: bool = False,
    judged: Mapping[tuple[str, str], Judged] | None = None,
) -> dict[str, Any]:
    """The questions.jsonl line for one question at one budget (one outcome per arm)."""
    question = outcomes[0].question
    arms: dict[str, Any] = {}
    for o in outcomes:
        entry: dict[str, Any] = {
            "context": o.retrieval.context,
            "turn_ids": list(o.retrieval.turn_ids),
            "tokens": o.retrieval.tokens,
        }
        if with_budget:
            entry["budget"] = o.budget
        if ranks:  # LongMemEval: the head of the rankings its metrics read
            entry["ranked_sessions"] = list(o.ranked_sessions[:10])
            entry["ranked_turns"] = list(o.retrieval.ranked_turns[:10])
        verdict = (judged or {}).get((o.arm, question.id))
        if verdict is not None:
            entry["answer"] = judged_line(verdict)
        arms[o.arm] = entry
    line: dict[str, Any] = {
        "id": question.id,
        "category": question.category,
        "question": question.question,
        "answer": question.answer,
        "evidence": list(question.evidence),
    }
    if ranks:
        line["answer_sessions"] = list(question.answer_sessions)
        line["abstention"] = question.abstention
    line["arms"] = arms
    return line


def fmt(value: Any, digits: int = 3) -> str:
    """A table cell: floats rounded, None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A markdown table as lines."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(fmt(cell) for cell in row) + " |" for row in rows]
    return out


def _metric_table(
    arms: Mapping[str, Any], metric: str, rows: Sequence[tuple[str, str]], counts: str | None
) -> list[str]:
    names = list(arms)
    first = arms[names[0]] if names else {}
    body = []
    for key, label in rows:
        n = first.get("questions_scored", {}).get(counts, {}).get(key) if counts else None
        shown = f"{label} (n={n})" if n is not None else label
        body.append([shown, *(arms[a][metric].get(key) for a in names)])
    return table(["category", *names], body)


def _pairs_table(pairs: Mapping[str, Any]) -> list[str]:
    rows = [
        [name.replace("_vs_", " vs "), p["b"], p["c"], f"{p['p']:.4g}"] for name, p in pairs.items()
    ]
    return table(["pair (first vs second)", "b: first only", "c: second only", "p (exact)"], rows)


def _cost_table(arms: Mapping[str, Any]) -> list[str]:
    digits = {
        "mean_tokens": 1,
        "p95_tokens": 1,
        "ingest_turns_per_s": 1,
        "ingest_seconds_median": 2,
        "embed_seconds": 2,
        "embed_texts_per_turn": 2,
        "non_embedding_share": 3,
        "recall_ms_p50": 1,
        "recall_ms_p99": 1,
    }
    rows = [[a, *(fmt(arms[a].get(k), d) for k, d in digits.items())] for a in arms]
    return table(["arm", *digits], rows)


def _cost_line(arms: Mapping[str, Any]) -> str:
    parts = [
        f"{a}: ingest {fmt(s.get('ingest_turns_per_s'), 1)} turns/s "
        f"({fmt(s.get('ingest_seconds'), 1)} s, embedder {fmt(s.get('embed_seconds'), 1)} s), "
        f"recall p50 {fmt(s.get('recall_ms_p50'), 1)} ms / p99 {fmt(s.get('recall_ms_p99'), 1)} ms"
        for a, s in arms.items()
    ]
    return "; ".join(parts) + "."


def _settings_lines(summary: Mapping[str, Any]) -> list[str]:
    s = summary["settings"]
    lines = [
        f"- Budget: {s['budget']} tokens per question (WordPiece tokens of the embedder's "
        "vocabulary, `nmafc.embedding.tokens.default_counter()`, the same ruler for every arm)"
        + (f"; budgets run: {', '.join(map(str, s['budgets']))}" if len(s["budgets"]) > 1 else ""),
        f"- Retrieval preset: `{s['preset']}` (full preset in summary.json); extractor: "
        f"`{(s.get('engine') or {}).get('extractor', '–')}`; embedder: `{s['embedder']}`",
        "- Reinforcement is OFF while scoring (`RecallOptions(reinforce=False)`), so answering "
        "questions never changes the store; `maintain()` runs once after each ingest.",
        f"- rag: windows of {s['rag']['window']} turns, stride {s['rag']['stride']}; "
        f"bm25: k1={s['bm25']['k1']}, b={s['bm25']['b']}; both pack in rank order, skipping "
        "an item that would overflow the budget (the engine renderer's policy).",
    ]
    if "sessions" in s["arms"]:
        lines.append(
            "- sessions: one vector per session from its user turns (the session-document "
            "method MemPalace publishes), ranked by cosine; the context holds the best "
            "sessions' turns in rank order, first-fit within the same budget."
        )
    return lines


def locomo_markdown(summary: Mapping[str, Any]) -> str:
    """summary.md for a LoCoMo run."""
    arms = summary["arms"]
    data = summary["data"]
    cats = data["categories"]
    label = {c: f"{c} {LOCOMO_CATEGORIES[c]}" for c in LOCOMO_CATEGORIES}
    scored = [("all", "all (1–4)"), *((c, label[c]) for c in SCORED_CATEGORIES)]
    reach = [("all", "all (1, 2, 4)"), *((c, label[c]) for c in REACHABLE_CATEGORIES)]
    lines = [
        "# LoCoMo retrieval evaluation",
        "",
        f"Conversations: {', '.join(summary['settings']['conversations'])} — "
        f"{data['turns']} turns, {data['questions']} questions.",
        "",
        *_settings_lines(summary),
        "",
        "Categories are not named in the file; they are commonly read as below "
        "(checked against the data: evidence turns per question, share of 'when' questions).",
        "",
        *table(
            ["category", "commonly read as", "questions", "mean evidence turns", "'when' share"],
            [
                [
                    c,
                    v["commonly_read_as"],
                    v["questions"],
                    v["mean_evidence_turns"],
                    v["when_share"],
                ]
                for c, v in cats.items()
            ],
        ),
        "",
        "## full_evidence_hit (every evidence turn in the context)",
        "",
        *_metric_table(arms, "full_evidence_hit", scored, "evidence"),
        "",
        "## evidence_recall (share of evidence turns in the context)",
        "",
        *_metric_table(arms, "evidence_recall", scored, "evidence"),
        "",
        "## answer_reachable (every answer word in the context; categories 1, 2, 4)",
        "",
        *_metric_table(arms, "answer_reachable", reach, "answer_reachable"),
        "",
        "## adversarial (category 5, reported apart)",
        "",
        *table(
            ["metric", *arms],
            [
                [m, *(arms[a]["adversarial"][m] for a in arms)]
                for m in ("full_evidence_hit", "evidence_recall", "questions")
            ],
        ),
        "",
        "## McNemar exact test on full_evidence_hit (categories 1–4)",
        "",
        *_pairs_table(summary["pairs"]),
        "",
        "## Cost",
        "",
        *_cost_table(arms),
        "",
        _cost_line(arms),
    ]
    lines += _budget_section(summary, "full_evidence_hit")
    lines += answers_section(summary, scored)
    lines += [
        "",
        "## Data",
        "",
        f"Evidence ids: {data['evidence_raw']} listed, {data['evidence_malformed']} malformed "
        f"({data['evidence_recovered_from_malformed']} ids recovered from them, "
        f"{data['evidence_dropped_unparseable']} unparseable dropped), "
        f"{data['evidence_dropped_unresolved']} pointing to no turn dropped. Questions without "
        "resolvable evidence (excluded from evidence metrics): "
        + (
            ", ".join(
                f"category {c}: {n}"
                for c, n in data["questions_without_resolvable_evidence"].items()
            )
            or "none"
        )
        + ".",
    ]
    return "\n".join([*lines, *_command(summary)]) + "\n"


def _budget_section(summary: Mapping[str, Any], metric: str) -> list[str]:
    budgets = summary.get("budgets")
    if not budgets:
        return []
    names = list(summary["arms"])
    rows = [[b, *(budgets[b]["arms"][a][metric]["all"] for a in names)] for b in budgets]
    return ["", f"## {metric} (all) by budget", "", *table(["budget", *names], rows)]


def _command(summary: Mapping[str, Any]) -> list[str]:
    return ["", "## Reproduce", "", "```", summary["command"], "```"]


def longmemeval_markdown(summary: Mapping[str, Any]) -> str:
    """summary.md for a LongMemEval run."""
    arms = summary["arms"]
    data = summary["data"]
    types = [("all", "all (not abstention)"), *((t, t) for t in data["questions_by_type"])]
    lines = [
        "# LongMemEval retrieval evaluation",
        "",
        f"{data['questions']} questions ({data['abstention_questions']} abstention, reported "
        f"apart), {data['sessions']} sessions, {data['turns']} turns. Each question's haystack "
        "is ingested into its own conversation.",
        "",
        *_settings_lines(summary),
        "- Rankings: nmafc ranks sessions and turns by its recall hits (at most the preset's "
        "`rerank_top_k`); rag, bm25 and sessions by their whole ranking. turn_recall@10 = share of "
        "`has_answer` turns among the first 10 ranked turns.",
    ]
    for metric in (
        "session_recall_any@5",
        "session_recall_all@5",
        "session_recall_any@10",
        "turn_recall@10",
        "full_evidence_hit",
    ):
        lines += ["", f"## {metric}", "", *_metric_table(arms, metric, types, None)]
    metrics = list(arms[next(iter(arms))]["abstention"])
    lines += [
        "",
        "## abstention questions (`_abs`)",
        "",
        *table(
            ["metric", *arms], [[m, *(arms[a]["abstention"][m] for a in arms)] for m in metrics]
        ),
        "",
        "## McNemar exact test on session recall_any@5",
        "",
        *_pairs_table(summary["pairs"]),
        "",
        "## Cost",
        "",
        *_cost_table(arms),
        "",
        _cost_line(arms),
    ]
    lines += answers_section(summary, types, apart="abstention questions")
    return "\n".join([*lines, *_command(summary)]) + "\n"


def answers_section(
    summary: Mapping[str, Any], rows: Sequence[tuple[str, str]], *, apart: str | None = None
) -> list[str]:
    """The J tables of a run with ``--answer-model``; nothing without one."""
    block = summary.get("answers")
    if not block:
        return []
    arms = block["arms"]
    settings = block["settings"]
    names = list(arms)
    first = arms[names[0]] if names else {}
    body = []
    for key, label in rows:
        n = first.get("questions_judged", {}).get(key)
        body.append(
            [f"{label} (n={n})" if n is not None else label, *(arms[a]["j"][key] for a in names)]
        )
    if apart:
        body.append(
            [f"{apart} (n={first['apart']['questions']})", *(arms[a]["apart"]["j"] for a in names)]
        )
    prices = settings["usd_per_1m_tokens"]
    priced = any(v is not None for v in prices.values())
    cost_rows = []
    for a in names:
        per = arms[a]["tokens"]["per_question"]
        total = arms[a]["tokens"]["total"]
        cost_rows.append(
            [
                a,
                fmt(per["answer_prompt"], 1),
                fmt(per["answer_completion"], 1),
                fmt(per["judge_prompt"], 1),
                fmt(per["judge_completion"], 1),
                total["prompt"] + total["completion"],
                fmt(arms[a]["cost_usd"], 4),
                arms[a]["unreadable_verdicts"],
            ]
        )
    price_line = (
        "Prices (USD per 1M tokens): "
        + ", ".join(f"{k.replace('_', ' ')} {fmt(v, 3)}" for k, v in prices.items())
        + "."
        if priced
        else "No prices given (--price-in/--price-out): tokens only."
    )
    return [
        "",
        "## J: answered from each arm's context, graded by an LLM judge (CORRECT / WRONG)",
        "",
        f"Answer model `{settings['answer_model']}`, judge `{settings['judge_model']}`, "
        f"temperature 0, contexts at budget {settings['budget']}, questions: "
        f"{settings['categories']}. J is the share judged CORRECT; a verdict without a "
        "readable label counts as WRONG. It depends on both models: compare arms within one "
        "run, not across runs with other models.",
        "",
        *table(["category", *names], body),
        "",
        "### McNemar exact test on J",
        "",
        *_pairs_table(block["pairs"]),
        "",
        "### LLM tokens per question and cost",
        "",
        *table(
            [
                "arm",
                "answer prompt",
                "answer completion",
                "judge prompt",
                "judge completion",
                "tokens in all",
                "cost (USD)",
                "unreadable verdicts",
            ],
            cost_rows,
        ),
        "",
        price_line,
    ]

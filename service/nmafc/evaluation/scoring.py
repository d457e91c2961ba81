"""Per-question outcomes aggregated into the per-arm numbers summary.json reports."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from nmafc.evaluation.arms import Retrieval
from nmafc.evaluation.judge import Judged
from nmafc.evaluation.loaders import LOCOMO_CATEGORIES, Question
from nmafc.evaluation.metrics import (
    answer_reachable,
    discordant,
    evidence_recall,
    full_evidence_hit,
    mcnemar_exact,
    mean,
    percentile,
    recall_all_at,
    recall_any_at,
    recall_at,
)

SCORED_CATEGORIES = ("1", "2", "3", "4")  # 5 (adversarial) is reported on its own
REACHABLE_CATEGORIES = ("1", "2", "4")  # category 3 answers are inferences, not quotes
ADVERSARIAL = "5"
Value = bool | float | None


@dataclass(frozen=True, slots=True)
class Outcome:
    """One arm's retrieval for one question at one budget."""

    question: Question
    arm: str
    budget: int
    retrieval: Retrieval
    latency_ms: float
    ranked_sessions: tuple[str, ...] = ()


@dataclass(slots=True)
class IngestTiming:
    """Wall-clock ingestion of one arm, and the part of it spent inside the embedder."""

    seconds: float = 0.0
    turns: int = 0
    embed_seconds: float = 0.0
    embed_texts: int = 0
    chars: int = 0
    # Seconds per conversation (on LongMemEval: per question, each its own haystack).
    per_conversation: list[float] = field(default_factory=list)

    def add(self, seconds: float, turns: int, chars: int, embed: tuple[float, int]) -> None:
        """Count one conversation's ingest: its wall time, size and embedder share."""
        self.seconds += seconds
        self.turns += turns
        self.chars += chars
        self.embed_seconds += embed[0]
        self.embed_texts += embed[1]
        self.per_conversation.append(seconds)

    def as_dict(self) -> dict[str, Any]:
        """The ingest fields of an arm's summary."""
        share = (self.seconds - self.embed_seconds) / self.seconds if self.seconds else None
        each = self.per_conversation
        middle = percentile(each, 50)
        return {
            "ingest_seconds": round(self.seconds, 3),
            "ingest_turns": self.turns,
            "ingest_turns_per_s": round(self.turns / self.seconds, 2) if self.seconds else None,
            "ingest_chars_per_s": round(self.chars / self.seconds, 1) if self.seconds else None,
            "ingest_seconds_median": None if middle is None else round(middle, 3),
            "ingest_seconds_max": round(max(each), 3) if each else None,
            "embed_seconds": round(self.embed_seconds, 3),
            "embed_texts": self.embed_texts,
            "embed_texts_per_turn": round(self.embed_texts / self.turns, 3) if self.turns else None,
            "non_embedding_share": None if share is None else round(share, 4),
        }


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def rate(outcomes: Iterable[Outcome], metric: Callable[[Outcome], Value]) -> float | None:
    """Mean of ``metric`` over outcomes where it is defined."""
    return _rounded(mean(metric(o) for o in outcomes))


def by_category(
    outcomes: Sequence[Outcome], metric: Callable[[Outcome], Value], categories: Sequence[str]
) -> dict[str, float | None]:
    """``{"all": …, "<category>": …}`` over the given categories."""
    kept = [o for o in outcomes if o.question.category in categories]
    table: dict[str, float | None] = {"all": rate(kept, metric)}
    for category in categories:
        table[category] = rate([o for o in kept if o.question.category == category], metric)
    return table


def cost_and_latency(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Token and latency statistics of one arm at one budget."""
    tokens = [float(o.retrieval.tokens) for o in outcomes]
    latency = [o.latency_ms for o in outcomes]
    return {
        "mean_tokens": _rounded(mean(tokens), 1),
        "p95_tokens": _rounded(percentile(tokens, 95), 1),
        "recall_ms_p50": _rounded(percentile(latency, 50), 2),
        "recall_ms_p99": _rounded(percentile(latency, 99), 2),
        "retrievals": len(outcomes),
    }


def fe_hit(o: Outcome) -> bool | None:
    """full_evidence_hit of an outcome."""
    return full_evidence_hit(o.question.evidence, o.retrieval.turn_ids)


def ev_recall(o: Outcome) -> float | None:
    """evidence_recall of an outcome."""
    return evidence_recall(o.question.evidence, o.retrieval.turn_ids)


def reachable(o: Outcome) -> bool | None:
    """answer_reachable of an outcome."""
    return answer_reachable(o.question.answer, o.retrieval.context)


def locomo_arm(outcomes: Sequence[Outcome], timing: IngestTiming) -> dict[str, Any]:
    """One arm's LoCoMo summary at one budget."""
    adversarial = [o for o in outcomes if o.question.category == ADVERSARIAL]
    evidenced = [o for o in outcomes if o.question.evidence]
    summary: dict[str, Any] = {
        "full_evidence_hit": by_category(outcomes, fe_hit, SCORED_CATEGORIES),
        "evidence_recall": by_category(outcomes, ev_recall, SCORED_CATEGORIES),
        "answer_reachable": by_category(outcomes, reachable, REACHABLE_CATEGORIES),
        "adversarial": {
            "full_evidence_hit": rate(adversarial, fe_hit),
            "evidence_recall": rate(adversarial, ev_recall),
            "questions": sum(1 for o in adversarial if o.question.evidence),
        },
        "questions_scored": {
            "evidence": by_count(evidenced, SCORED_CATEGORIES),
            "answer_reachable": by_count(
                [o for o in outcomes if reachable(o) is not None], REACHABLE_CATEGORIES
            ),
        },
    }
    summary.update(cost_and_latency(outcomes))
    summary.update(timing.as_dict())
    return summary


def by_count(outcomes: Sequence[Outcome], categories: Sequence[str]) -> dict[str, int]:
    """How many outcomes each category (and "all" of them) has."""
    counts = {c: sum(1 for o in outcomes if o.question.category == c) for c in categories}
    return {"all": sum(counts.values()), **counts}


def mcnemar_pairs(
    per_arm: Mapping[str, Sequence[Outcome]], metric: Callable[[Outcome], bool | None]
) -> dict[str, dict[str, Any]]:
    """McNemar exact test of ``metric`` for each pair of arms (in the order given)."""
    pairs: dict[str, dict[str, Any]] = {}
    for first, second in combinations(per_arm, 2):
        left = {o.question.id: metric(o) for o in per_arm[first]}
        right = {o.question.id: metric(o) for o in per_arm[second]}
        shared = [qid for qid in left if qid in right]
        b, c = discordant([left[q] for q in shared], [right[q] for q in shared])
        pairs[f"{first}_vs_{second}"] = {"b": b, "c": c, "p": mcnemar_exact(b, c)}
    return pairs


def locomo_scored_hit(o: Outcome) -> bool | None:
    """full_evidence_hit over the scored categories only (the McNemar input)."""
    return fe_hit(o) if o.question.category in SCORED_CATEGORIES else None


def category_check(questions: Sequence[Question]) -> dict[str, dict[str, Any]]:
    """Per category: the common reading, size, mean evidence turns, share of 'when' questions."""
    table: dict[str, dict[str, Any]] = {}
    for category, name in LOCOMO_CATEGORIES.items():
        chosen = [q for q in questions if q.category == category]
        table[category] = {
            "commonly_read_as": name,
            "questions": len(chosen),
            "mean_evidence_turns": _rounded(mean(len(q.evidence) for q in chosen), 2),
            "when_share": _rounded(
                mean(q.question.lower().lstrip().startswith("when") for q in chosen), 3
            ),
        }
    return table


# -- LongMemEval --------------------------------------------------------------------------

LME_METRICS: dict[str, Callable[[Outcome], Value]] = {
    "session_recall_any@5": lambda o: recall_any_at(
        o.ranked_sessions, o.question.answer_sessions, 5
    ),
    "session_recall_all@5": lambda o: recall_all_at(
        o.ranked_sessions, o.question.answer_sessions, 5
    ),
    "session_recall_any@10": lambda o: recall_any_at(
        o.ranked_sessions, o.question.answer_sessions, 10
    ),
    "turn_recall@10": lambda o: recall_at(o.retrieval.ranked_turns, o.question.evidence, 10),
    "full_evidence_hit": fe_hit,
    "evidence_recall": ev_recall,
}


def lme_main_hit(o: Outcome) -> bool | None:
    """session recall_any@5 of a non-abstention question (the McNemar input)."""
    if o.question.abstention:
        return None
    return recall_any_at(o.ranked_sessions, o.question.answer_sessions, 5)


def longmemeval_arm(
    outcomes: Sequence[Outcome], timing: IngestTiming, types: Sequence[str]
) -> dict[str, Any]:
    """One arm's LongMemEval summary: metrics by question type, abstention apart."""
    answerable = [o for o in outcomes if not o.question.abstention]
    abstention = [o for o in outcomes if o.question.abstention]
    summary: dict[str, Any] = {
        name: by_category(answerable, metric, types) for name, metric in LME_METRICS.items()
    }
    summary["abstention"] = {name: rate(abstention, m) for name, m in LME_METRICS.items()}
    summary["abstention"]["questions"] = len(abstention)
    summary["questions_scored"] = by_count(answerable, types)
    summary.update(cost_and_latency(outcomes))
    summary.update(timing.as_dict())
    return summary


# -- Answer and judge (J) ----------------------------------------------------------------


def j_metric(judged: Mapping[tuple[str, str], Judged]) -> Callable[[Outcome], bool | None]:
    """J of an outcome: its answer judged CORRECT; None when it was not judged."""

    def metric(o: Outcome) -> bool | None:
        found = judged.get((o.arm, o.question.id))
        return None if found is None else found.correct

    return metric


def _tokens(chosen: Sequence[Judged]) -> dict[str, Any]:
    prompt = sum(j.answer_usage.prompt_tokens + j.judge_usage.prompt_tokens for j in chosen)
    completion = sum(
        j.answer_usage.completion_tokens + j.judge_usage.completion_tokens for j in chosen
    )
    return {
        "per_question": {
            "answer_prompt": _rounded(mean(j.answer_usage.prompt_tokens for j in chosen), 1),
            "answer_completion": _rounded(
                mean(j.answer_usage.completion_tokens for j in chosen), 1
            ),
            "judge_prompt": _rounded(mean(j.judge_usage.prompt_tokens for j in chosen), 1),
            "judge_completion": _rounded(mean(j.judge_usage.completion_tokens for j in chosen), 1),
        },
        "total": {"prompt": prompt, "completion": completion},
    }


def j_arm(
    outcomes: Sequence[Outcome],
    judged: Mapping[tuple[str, str], Judged],
    categories: Sequence[str],
    *,
    apart: Callable[[Question], bool] | None = None,
) -> dict[str, Any]:
    """One arm's J by category, with its tokens and cost; ``apart`` questions reported alone."""
    metric = j_metric(judged)
    mine = [o for o in outcomes if (o.arm, o.question.id) in judged]
    main = [o for o in mine if apart is None or not apart(o.question)]
    chosen = [judged[(o.arm, o.question.id)] for o in mine]
    costs = [j.cost_usd for j in chosen if j.cost_usd is not None]
    summary: dict[str, Any] = {
        "j": by_category(main, metric, categories),
        "questions_judged": by_count(main, categories),
        "unreadable_verdicts": sum(1 for j in chosen if j.label is None),
        "tokens": _tokens(chosen),
        "cost_usd": round(sum(costs), 6) if costs else None,
        "cost_per_question_usd": round(sum(costs) / len(costs), 8) if costs else None,
    }
    if apart is not None:
        rest = [o for o in mine if apart(o.question)]
        summary["apart"] = {"j": rate(rest, metric), "questions": len(rest)}
    return summary


def j_block(
    per_arm: Mapping[str, Sequence[Outcome]],
    judged: Mapping[tuple[str, str], Judged],
    categories: Sequence[str],
    described: Mapping[str, Any],
    *,
    apart: Callable[[Question], bool] | None = None,
) -> dict[str, Any]:
    """summary.json's ``answers``: settings, J per arm and category, McNemar on J."""
    return {
        "settings": dict(described),
        "arms": {a: j_arm(o, judged, categories, apart=apart) for a, o in per_arm.items()},
        "pairs": mcnemar_pairs(per_arm, j_metric(judged)),
    }

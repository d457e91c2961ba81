"""Answer and judge: with an upstream LLM, each arm's context answers each question and a judge
grades the answer against the gold one, CORRECT or WRONG (the "J" score LoCoMo papers report).

Runs only when ``--answer-model`` is given, through the configured provider
(``NMAFC_LLM_*``, :func:`nmafc.providers.create_provider`): the same client, retries and rate
limit as the chat proxy. The judge follows the convention of the published LoCoMo
evaluations (Mem0's and those that reuse its harness): question, gold answer and generated
answer in one prompt; lenient on wording and length, same day or period for dates; a JSON
``label``; temperature 0; category 5 (adversarial) not judged. A verdict the judge wrote
without a readable label counts as WRONG, as in those harnesses, and is counted apart.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from nmafc.errors import InvalidInput
from nmafc.evaluation.progress import Progress
from nmafc.providers import ChatProvider, Json, create_provider, llm_configured
from nmafc.settings.llm import LlmSettings

Label = Literal["CORRECT", "WRONG"]

ANSWER_SYSTEM = (
    "You answer a question about past conversations using only the memory excerpts you are "
    "given; each excerpt carries the date it was said. Answer in as few words as the question "
    "allows: a name, a number, a date or a short phrase. For a question about when something "
    "happened, give the date, working out words like 'yesterday' or 'last week' from the "
    "excerpt's date. If the excerpts do not hold the answer, say that you do not know."
)

JUDGE_PROMPT = """\
You are grading an answer to a question about earlier conversations between people.
You are given the question, the gold answer (the truth; usually short) and a generated answer.

Label the generated answer CORRECT when it refers to the same thing as the gold answer. Be \
lenient: the generated answer may be longer, add detail or use other words; as long as it \
names the same topic, entity or fact, it is CORRECT. For a question about time, it is CORRECT \
when it names the same day, month, year or period as the gold answer, in any format or as a \
relative expression that resolves to it. Label it WRONG when it misses or contradicts the \
gold answer, or says it does not know.

Question: {question}
Gold answer: {gold}
Generated answer: {answer}

Write one short sentence of reasoning, then the label as JSON, either {{"label": "CORRECT"}} \
or {{"label": "WRONG"}}. Never write both labels."""

_JSON_LABEL = re.compile(r'"label"\s*:\s*"(CORRECT|WRONG)"', re.IGNORECASE)
_BARE_LABEL = re.compile(r"\b(CORRECT|WRONG)\b")


def _first(value: float | None, default: float | None) -> float | None:
    return value if value is not None else default


@dataclass(frozen=True, slots=True)
class JudgeOptions:
    """Which models answer and judge, the prices per 1M tokens, and calls in flight."""

    answer_model: str
    judge_model: str | None = None  # default: the answer model
    price_in: float | None = None  # USD per 1M prompt tokens of the answer model
    price_out: float | None = None  # USD per 1M completion tokens of the answer model
    judge_price_in: float | None = None  # default: price_in
    judge_price_out: float | None = None  # default: price_out
    concurrency: int = 8
    answer_max_tokens: int = 200
    judge_max_tokens: int = 200

    @property
    def judge(self) -> str:
        """The judge model's name."""
        return self.judge_model or self.answer_model

    @property
    def priced(self) -> bool:
        """Whether any price was given (a missing one then counts as 0)."""
        return any(
            p is not None
            for p in (self.price_in, self.price_out, self.judge_price_in, self.judge_price_out)
        )

    def cost(self, answer: Usage, judge: Usage) -> float | None:
        """USD of one answer and its verdict; None without prices."""
        if not self.priced:
            return None
        judge_in = _first(self.judge_price_in, self.price_in)
        judge_out = _first(self.judge_price_out, self.price_out)
        return (
            answer.prompt_tokens * (self.price_in or 0.0)
            + answer.completion_tokens * (self.price_out or 0.0)
            + judge.prompt_tokens * (judge_in or 0.0)
            + judge.completion_tokens * (judge_out or 0.0)
        ) / 1_000_000

    def describe(self) -> dict[str, Any]:
        """The settings block of summary.json."""
        return {
            "answer_model": self.answer_model,
            "judge_model": self.judge,
            "usd_per_1m_tokens": {
                "answer_in": self.price_in,
                "answer_out": self.price_out,
                "judge_in": _first(self.judge_price_in, self.price_in),
                "judge_out": _first(self.judge_price_out, self.price_out),
            },
            "temperature": 0,
            "concurrency": self.concurrency,
            "answer_prompt": ANSWER_SYSTEM,
            "judge_prompt": JUDGE_PROMPT,
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens the upstream reported for one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Judged:
    """One arm's answer to one question and the judge's verdict on it."""

    answer: str
    verdict: str
    label: Label | None  # None: the judge wrote no readable label (counted WRONG)
    answer_usage: Usage
    judge_usage: Usage
    cost_usd: float | None

    @property
    def correct(self) -> bool:
        """The J outcome of this question."""
        return self.label == "CORRECT"


@dataclass(frozen=True, slots=True)
class Item:
    """What one call pair needs: which arm and question, and the context to answer from."""

    arm: str
    question_id: str
    question: str
    gold: str
    context: str
    asked_on: str | None = None  # "23 April 2023" when the dataset dates the question


def answer_messages(question: str, context: str, asked_on: str | None = None) -> list[Json]:
    """The answer request's messages (with the question's date when the dataset gives one)."""
    memory = context.strip() or "(no excerpts)"
    asked = f"\n(Asked on {asked_on}.)" if asked_on else ""
    return [
        {"role": "system", "content": ANSWER_SYSTEM},
        {
            "role": "user",
            "content": f"Memory excerpts:\n{memory}\n\nQuestion: {question}{asked}",
        },
    ]


def judge_messages(question: str, gold: str, answer: str) -> list[Json]:
    """The judge request's messages."""
    prompt = JUDGE_PROMPT.format(question=question, gold=gold, answer=answer)
    return [{"role": "user", "content": prompt}]


def parse_label(text: str) -> Label | None:
    """The verdict's label: the last JSON ``label``, else the one bare label word it has."""
    found = _JSON_LABEL.findall(text)
    if found:
        return "CORRECT" if found[-1].upper() == "CORRECT" else "WRONG"
    words = set(_BARE_LABEL.findall(text))
    if len(words) == 1:
        return "CORRECT" if words == {"CORRECT"} else "WRONG"
    return None


def completion_text(completion: Json) -> str:
    """The first choice's message content ('' when there is none)."""
    choices = completion.get("choices") or []
    if not choices:
        return ""
    content = (choices[0].get("message") or {}).get("content")
    if isinstance(content, list):  # content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "").strip()


def usage_of(completion: Json) -> Usage:
    """The completion's reported token usage (zeros when the upstream reports none)."""
    usage = completion.get("usage") or {}
    return Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))


async def _call(provider: ChatProvider, model: str, messages: list[Json], limit: int) -> Json:
    request: Json = {
        "model": model,
        "messages": messages,
        "temperature": 0,
        "max_tokens": limit,
    }
    return await provider.complete(request)


async def judge_one(provider: ChatProvider, item: Item, options: JudgeOptions) -> Judged:
    """Answer ``item``'s question from its context, then have the judge grade the answer."""
    answered = await _call(
        provider,
        options.answer_model,
        answer_messages(item.question, item.context, item.asked_on),
        options.answer_max_tokens,
    )
    answer = completion_text(answered)
    graded = await _call(
        provider,
        options.judge,
        judge_messages(item.question, item.gold, answer),
        options.judge_max_tokens,
    )
    verdict = completion_text(graded)
    answer_usage, judge_usage = usage_of(answered), usage_of(graded)
    return Judged(
        answer=answer,
        verdict=verdict,
        label=parse_label(verdict),
        answer_usage=answer_usage,
        judge_usage=judge_usage,
        cost_usd=options.cost(answer_usage, judge_usage),
    )


async def judge_items(
    provider: ChatProvider, items: Sequence[Item], options: JudgeOptions, *, progress: bool
) -> dict[tuple[str, str], Judged]:
    """Every item judged, at most ``options.concurrency`` at once, keyed by (arm, question)."""
    slots = asyncio.Semaphore(options.concurrency)
    results: dict[tuple[str, str], Judged] = {}
    with Progress("answer+judge", len(items), enabled=progress) as bar:

        async def one(item: Item) -> None:
            async with slots:
                results[(item.arm, item.question_id)] = await judge_one(provider, item, options)
            bar.update(note=item.arm)

        await asyncio.gather(*(one(item) for item in items))
    return results


def require_llm(llm: LlmSettings) -> None:
    """Refuse (before any work) to judge without a configured upstream."""
    if not llm_configured(llm):
        raise InvalidInput(
            "--answer-model needs an upstream LLM, and none is configured.",
            fix="Set NMAFC_LLM_BASE_URL (and NMAFC_LLM_API_KEY or OPENAI_API_KEY), "
            "or drop --answer-model.",
        )


def provider_for(llm: LlmSettings) -> ChatProvider:
    """The configured upstream, or an error saying how to configure one."""
    require_llm(llm)
    return create_provider(llm)


def run_judge(
    llm: LlmSettings, items: Sequence[Item], options: JudgeOptions, *, progress: bool = True
) -> dict[tuple[str, str], Judged]:
    """Blocking entry point: open the provider, judge every item, close it."""
    if options.concurrency < 1:
        raise InvalidInput(
            "LLM concurrency must be at least 1.", fix="Pass --llm-concurrency 1 or more."
        )

    async def main() -> dict[tuple[str, str], Judged]:
        provider = provider_for(llm)
        try:
            return await judge_items(provider, items, options, progress=progress)
        finally:
            await provider.aclose()

    # A ProviderError (after the client's retries) ends the run: it names the upstream's
    # message and the fix, and a partial J over the questions that happened to work would
    # not be comparable between arms.
    return asyncio.run(main())


def judged_line(judged: Judged) -> dict[str, Any]:
    """The ``answer`` entry of an arm in questions.jsonl."""
    return {
        "text": judged.answer,
        "label": judged.label,
        "verdict": judged.verdict,
        "answer_tokens": {
            "prompt": judged.answer_usage.prompt_tokens,
            "completion": judged.answer_usage.completion_tokens,
        },
        "judge_tokens": {
            "prompt": judged.judge_usage.prompt_tokens,
            "completion": judged.judge_usage.completion_tokens,
        },
        "cost_usd": judged.cost_usd,
    }

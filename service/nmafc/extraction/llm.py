"""The LLM extractor (SPEC §5): one forced tool call per exchange returns the facts.

The engine calls extractors synchronously from worker threads, while providers are
asyncio clients; the extractor therefore owns a private event loop on one thread and
submits each call to it. The reply is validated with pydantic; a malformed one is asked
for once more, and if that fails too (or the upstream is down) the LLM-free extractor
takes over: the turn event in the log carries ``extraction_fallback`` with the reason,
and a warning is logged — a fact is never dropped silently.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Coroutine, Sequence
from dataclasses import replace
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator

from nmafc.core.entities import slugify
from nmafc.core.extraction.base import Extractor
from nmafc.core.facts import FactDraft
from nmafc.core.tiers import Tier
from nmafc.core.turns import Message
from nmafc.errors import ProviderNotConfigured
from nmafc.providers import ChatProvider, create_provider, llm_configured
from nmafc.settings import Settings

log = logging.getLogger(__name__)
T = TypeVar("T")
TOOL = "record_facts"
ATTEMPTS = 2  # the first answer, and one retry of a malformed one

PROMPT = """You extract long-term memory from a conversation for an assistant's memory store.
Call record_facts once with every fact worth remembering from the messages below.

Rules:
- One self-contained sentence per fact, naming the person (never "I", "you", "my"): write
  "Caroline moved to Porto", not "I moved there".
- Resolve relative dates against the message's timestamp and write absolute dates in the
  sentence ("yesterday" said on 8 May 2023 -> "on 7 May 2023").
- entity: a short stable snake_case key for what the fact is about, e.g.
  caroline_home_city, melanie_kids. Reuse the same key for the same attribute.
- tier: CoreAnchor for identity, relationships, allergies, enduring preferences and
  completed dated events; ActiveContext for goals, plans, schedules and current states;
  EphemeralState for moods and momentary remarks.
- overrides_entity: when the fact replaces an earlier value of a single-valued attribute
  (lives in, works at, name, favourite, relationship status), the entity key of the old
  value (usually the fact's own entity); otherwise null.
- related_entities: entity keys of the people, places and things the fact links to
  (e.g. ["caroline", "lgbtq_support_group"]). Always fill it: it builds the memory graph.
- message_index: the index of the message the fact comes from.
- importance: 0..1. Skip greetings, thanks and filler. Return an empty list if nothing
  is worth remembering."""


class ExtractedFact(BaseModel):
    """One fact as the model must return it."""

    message_index: int = Field(ge=0)
    entity: str = Field(min_length=1, max_length=200)
    content: str = Field(min_length=1, max_length=2000)
    tier: Literal["CoreAnchor", "ActiveContext", "EphemeralState"] = "ActiveContext"
    importance: float = Field(0.5, ge=0, le=1)
    overrides_entity: str | None = None
    related_entities: list[str] = Field(default_factory=list, max_length=20)

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("content is blank")
        return value.strip()


class ExtractedFacts(BaseModel):
    facts: list[ExtractedFact] = Field(max_length=200)


def tool_schema() -> dict[str, Any]:
    """The ``record_facts`` function the model is forced to call."""
    return {
        "type": "function",
        "function": {
            "name": TOOL,
            "description": "Record the facts worth remembering from the conversation.",
            "parameters": ExtractedFacts.model_json_schema(),
        },
    }


class MalformedExtraction(ValueError):
    """The model's answer is not a valid ``record_facts`` call."""


def parse_reply(completion: dict[str, Any], messages: int) -> list[ExtractedFact]:
    """The facts of a ``chat.completion``, validated; :class:`MalformedExtraction` if not."""
    try:
        message = completion["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise MalformedExtraction("the reply has no message") from exc
    calls = message.get("tool_calls") or []
    raw = calls[0]["function"].get("arguments") if calls else message.get("content")
    if not isinstance(raw, str) or not raw.strip():
        raise MalformedExtraction("the reply has neither a tool call nor JSON content")
    try:
        facts = ExtractedFacts.model_validate(json.loads(_strip_fence(raw))).facts
    except (ValueError, ValidationError) as exc:
        raise MalformedExtraction(f"invalid record_facts arguments: {exc}"[:500]) from exc
    if any(f.message_index >= messages for f in facts):
        raise MalformedExtraction("a fact names a message index that does not exist")
    return facts


def _strip_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    return text


def to_draft(fact: ExtractedFact) -> FactDraft:
    entity = slugify(fact.entity)
    return FactDraft(
        content=fact.content,
        entity=entity,
        tier=Tier(fact.tier),
        importance=fact.importance,
        related_entities=tuple(dict.fromkeys(slugify(e) for e in fact.related_entities)),
        overrides_entity=slugify(fact.overrides_entity) if fact.overrides_entity else None,
        message_index=fact.message_index,
    )


def transcript(messages: Sequence[Message]) -> str:
    """The messages as the model reads them: index, time, speaker, text."""
    lines = []
    for index, message in enumerate(messages):
        when = message.occurred_at.strftime("%A %d %B %Y %H:%M") if message.occurred_at else "?"
        lines.append(f"[{index}] ({when}) {message.speaker_name}: {message.full_text()}")
    return "\n".join(lines)


class LlmExtractor:
    """Facts from one tool call per batch of messages, with the rule extractor as fallback."""

    name = "llm"

    def __init__(
        self, provider: ChatProvider, model: str | None, fallback: Extractor, timeout_s: float
    ) -> None:
        self.provider = provider
        self.model = model
        self.fallback = fallback
        self.timeout_s = timeout_s
        self.fallbacks = 0  # how many batches the fallback extracted (tests, metrics)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="nmafc-llm-extractor", daemon=True
        )
        self._thread.start()

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(timeout=self.timeout_s)

    def request(self, messages: Sequence[Message]) -> dict[str, Any]:
        """The chat request sent for ``messages``."""
        body: dict[str, Any] = {
            "messages": [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": transcript(messages)},
            ],
            "tools": [tool_schema()],
            "tool_choice": {"type": "function", "function": {"name": TOOL}},
            "temperature": 0,
        }
        if self.model:
            body["model"] = self.model
        return body

    def extract(self, messages: Sequence[Message]) -> list[FactDraft]:
        if not messages:
            return []
        problem = ""
        for _ in range(ATTEMPTS):
            try:
                completion = self._run(self.provider.complete(self.request(messages)))
                return [to_draft(f) for f in parse_reply(completion, len(messages))]
            except MalformedExtraction as exc:
                problem = f"malformed output: {exc}"
            except Exception as exc:  # any failure falls back: a fact is never dropped
                problem = f"upstream failed: {type(exc).__name__}: {exc}"
                break  # the provider already retried; asking again will not help
        self.fallbacks += 1
        log.warning(
            "LLM extraction fell back to the %s extractor (%s)",
            self.fallback.name,
            problem,
            extra={"event": "extraction_fallback", "reason": problem[:500]},
        )
        reason = f"{self.name} → {self.fallback.name}: {problem}"[:300]
        return [replace(d, fallback=reason) for d in self.fallback.extract(messages)]

    def close(self) -> None:
        """Close the provider and stop the loop thread."""
        if not self._loop.is_running():
            return
        try:
            self._run(self.provider.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            self._loop.close()


def llm_extractor(settings: Settings, *, fallback: Extractor) -> LlmExtractor:
    """The LLM extractor over ``settings.llm``; refuses to start without an upstream."""
    if not llm_configured(settings.llm):
        raise ProviderNotConfigured(
            "NMAFC_EXTRACTOR=llm needs an upstream LLM.",
            fix="Set NMAFC_LLM_BASE_URL and NMAFC_LLM_MODEL (or NMAFC_EXTRACTOR=rules).",
        )
    # The provider retries on its own; the budget covers its retries and one re-ask.
    timeout = settings.llm.timeout_s * (settings.llm.max_retries + 1) + 5
    return LlmExtractor(create_provider(settings.llm), settings.llm.model, fallback, timeout)

"""The LLM extractor against a fake OpenAI-compatible upstream on loopback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nmafc.core.extraction.rule_based import RuleExtractor
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.core.turns import Message
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import ProviderNotConfigured
from nmafc.extraction.llm import LlmExtractor, llm_extractor
from nmafc.settings import Settings

from ..providers.fakes import FakeUpstream, running_upstream

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
MESSAGES = [
    Message("I went to the LGBTQ support group yesterday.", "user", "Caroline", SAID),
    Message("That's great! How did it go?", "assistant", "Melanie", SAID),
]
VALID = {
    "facts": [
        {
            "message_index": 0,
            "entity": "Caroline support group",
            "content": "Caroline went to an LGBTQ support group on 7 May 2023.",
            "tier": "CoreAnchor",
            "importance": 0.8,
            "overrides_entity": None,
            "related_entities": ["caroline", "LGBTQ support group"],
        }
    ]
}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeUpstream]:
    with running_upstream("openai") as fake:
        yield fake


@pytest.fixture
def upstream(server: FakeUpstream) -> FakeUpstream:
    server.script.clear()
    server.received.clear()
    return server


def settings_for(upstream: FakeUpstream, tmp_path: Path, **overrides: Any) -> Settings:
    llm = {"base_url": upstream.url, "model": "fake-model", "max_retries": 0, "timeout_s": 5}
    return Settings(data_dir=tmp_path, extractor="llm", llm=llm, **overrides)  # type: ignore[arg-type]


@pytest.fixture
def extractor(upstream: FakeUpstream, tmp_path: Path) -> Iterator[LlmExtractor]:
    made = llm_extractor(settings_for(upstream, tmp_path), fallback=RuleExtractor())
    yield made
    made.close()


def test_a_valid_tool_call_becomes_facts_with_links_and_resolved_dates(
    extractor: LlmExtractor, upstream: FakeUpstream
) -> None:
    upstream.reply({"tool": {"name": "record_facts", "arguments": VALID}})
    drafts = extractor.extract(MESSAGES)
    assert len(drafts) == 1
    fact = drafts[0]
    assert fact.content == "Caroline went to an LGBTQ support group on 7 May 2023."
    assert fact.entity == "caroline_support_group"
    assert fact.tier is Tier.CORE_ANCHOR
    assert fact.related_entities == ("caroline", "lgbtq_support_group")
    assert fact.message_index == 0
    sent = upstream.chat_requests[0].body
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "record_facts"}}
    schema = sent["tools"][0]["function"]["parameters"]
    assert "related_entities" in str(schema)  # SPEC §5: the schema must ask for links
    assert "related_entities" in sent["messages"][0]["content"]
    assert "Monday 08 May 2023" in sent["messages"][1]["content"]  # dates to resolve against


def test_a_malformed_reply_is_asked_again_once(
    extractor: LlmExtractor, upstream: FakeUpstream
) -> None:
    upstream.reply({"content": "Sure! Here are the facts: ..."}, {"content": _json(VALID)})
    drafts = extractor.extract(MESSAGES)
    assert [d.entity for d in drafts] == ["caroline_support_group"]
    assert len(upstream.chat_requests) == 2
    assert extractor.fallbacks == 0


def test_malformed_twice_falls_back_to_the_rules_and_logs_an_event(
    extractor: LlmExtractor, upstream: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    bad = {"facts": [{"message_index": 7, "entity": "x", "content": "out of range"}]}
    upstream.reply({"tool": {"name": "record_facts", "arguments": {"facts": "nope"}}})
    upstream.reply({"tool": {"name": "record_facts", "arguments": bad}})
    with caplog.at_level(logging.WARNING, logger="nmafc.extraction.llm"):
        drafts = extractor.extract(MESSAGES)
    assert drafts == RuleExtractor().extract(MESSAGES)
    assert drafts  # the rules still found the support group: nothing dropped silently
    assert extractor.fallbacks == 1
    events = [r for r in caplog.records if getattr(r, "event", None) == "extraction_fallback"]
    assert len(events) == 1
    assert "malformed" in events[0].getMessage()


def test_an_upstream_failure_falls_back_without_asking_again(
    extractor: LlmExtractor, upstream: FakeUpstream
) -> None:
    upstream.reply({"status": 500, "message": "down"})
    drafts = extractor.extract(MESSAGES)
    assert drafts == RuleExtractor().extract(MESSAGES)
    assert len(upstream.chat_requests) == 1


def test_the_engine_remembers_through_the_llm_extractor(
    upstream: FakeUpstream, tmp_path: Path, shared_embedder: Any
) -> None:
    upstream.reply({"tool": {"name": "record_facts", "arguments": VALID}})
    settings = settings_for(upstream, tmp_path, consolidation={"inline": False})
    engine = MemoryEngine.open(settings, embedder=shared_embedder)
    try:
        scope = Scope("agent-llm", "c1")
        result = engine.remember(scope, MESSAGES)
        assert engine.ctx.extractor.name == "llm"
        records = engine.page(scope, after=0, limit=10).records
        assert [r.entity for r in records] == ["caroline_support_group"]
        assert records[0].related_entities == ("caroline", "lgbtq_support_group")
        assert result is not None
    finally:
        engine.close()


def test_a_fallback_is_written_into_the_event_log_with_its_reason(
    upstream: FakeUpstream, tmp_path: Path, shared_embedder: Any
) -> None:
    upstream.reply({"status": 500, "message": "model overloaded"})
    settings = settings_for(upstream, tmp_path, consolidation={"inline": False})
    engine = MemoryEngine.open(settings, embedder=shared_embedder)
    try:
        scope = Scope("agent-llm", "c2")
        result = engine.remember(scope, MESSAGES)
        assert result.added  # the rules extracted the facts instead
        turns = [e for e in engine.events(scope) if e.kind.value == "turn"]
        assert len(turns) == 1
        assert "llm → rules" in turns[0].detail["extraction_fallback"]
        assert "500" in turns[0].detail["extraction_fallback"]
    finally:
        engine.close()


def test_llm_extraction_without_an_upstream_names_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ProviderNotConfigured) as raised:
        llm_extractor(Settings(data_dir=tmp_path, extractor="llm"), fallback=RuleExtractor())
    assert "NMAFC_LLM_BASE_URL" in raised.value.fix


def _json(value: Any) -> str:
    import json

    return "```json\n" + json.dumps(value) + "\n```"

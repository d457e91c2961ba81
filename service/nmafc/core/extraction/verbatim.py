"""The simplest extractor: each message becomes one fact, attributed to its speaker."""

from __future__ import annotations

from collections.abc import Sequence

from nmafc.core.entities import slugify
from nmafc.core.facts import FactDraft
from nmafc.core.text import keyword_terms
from nmafc.core.tiers import Tier
from nmafc.core.turns import Message


class VerbatimExtractor:
    """One ActiveContext fact per message: ``"<speaker>: <text>"``. No filtering, no links."""

    name = "verbatim"

    def extract(self, messages: Sequence[Message]) -> list[FactDraft]:
        drafts = []
        for index, message in enumerate(messages):
            text = message.full_text().strip()
            topic = " ".join(keyword_terms(text, limit=3))
            drafts.append(
                FactDraft(
                    content=f"{message.speaker_name}: {text}",
                    entity=slugify(f"{message.speaker_name} {topic}"),
                    tier=Tier.ACTIVE_CONTEXT,
                    message_index=index,
                )
            )
        return drafts

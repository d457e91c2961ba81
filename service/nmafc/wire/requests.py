"""Request bodies of the HTTP API: strict, no nulls, no coercion."""

from __future__ import annotations

import math
from typing import Annotated

from pydantic import (
    ConfigDict,
    Field,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from nmafc.core.facts import FactDraft
from nmafc.core.tiers import Tier
from nmafc.core.turns import MAX_MESSAGE_CHARS, Message
from nmafc.wire.base import (
    WHOLE,
    Reach,
    Request,
    Said,
    Text,
    TierName,
    Timestamp,
    TurnNumber,
)


class MessageIn(Request):
    role: Said = Field("user", max_length=32, description="user, assistant, …")
    content: Said = Field(max_length=MAX_MESSAGE_CHARS, description="What was said.")
    speaker: Annotated[Said, Field(max_length=128)] | SkipJsonSchema[None] = Field(
        None, description="Name to attribute first person to."
    )
    timestamp: Timestamp | SkipJsonSchema[None] = Field(
        None,
        description="When it was said (resolves 'yesterday'): an ISO 8601 date-time from "
        "1970-01-01T00:00:00Z to the year 8999; without an offset it is UTC. Default: the "
        "timestamp of the message before it in this request, else the time it is received.",
    )
    captions: list[Annotated[Text, Field(max_length=2000)]] = Field(
        default_factory=list, max_length=8, description="Captions of shared images."
    )

    def to_message(self) -> Message:
        return Message(
            content=self.content,
            role=self.role,
            speaker=self.speaker,
            occurred_at=self.timestamp,
            captions=tuple(self.captions),
        )


class FactIn(Request):
    content: Said = Field(max_length=10_000, description="One self-contained fact.")
    entity: Annotated[Said, Field(max_length=200)] | SkipJsonSchema[None] = Field(
        None, description="Stable key; default: from the content."
    )
    tier: TierName = Field("ActiveContext", description="How long the fact is meant to live.")
    importance: float = Field(0.5, ge=0.0, le=1.0)
    related_entities: list[Annotated[Said, Field(max_length=200)]] = Field(
        default_factory=list, max_length=64, description="Entities this fact links to."
    )
    overrides_entity: Annotated[Said, Field(max_length=200)] | SkipJsonSchema[None] = Field(
        None, description="Invalidate this entity's current facts."
    )

    def to_draft(self) -> FactDraft:
        # No client vectors over HTTP: the server embeds with the model the store is pinned
        # to, so a vector from another model can never slip in unnoticed.
        return FactDraft(
            content=self.content,
            entity=self.entity or self.content,
            tier=Tier(self.tier),
            importance=self.importance,
            related_entities=tuple(self.related_entities),
            overrides_entity=self.overrides_entity,
        )


# A history is imported in requests of at most this many messages (4 MiB bodies hold them).
MAX_MESSAGES_PER_REQUEST = 500


class AddMessages(Request):
    """Conversation messages: each is stored as a turn and its facts are extracted."""

    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES_PER_REQUEST)


class AddFacts(Request):
    """Explicit facts, stored as given (no turns)."""

    facts: list[FactIn] = Field(min_length=1, max_length=1000)


AddMemories = AddMessages | AddFacts


class SearchRequest(Request):
    query: Said = Field(max_length=4000)
    top_k: Annotated[int, Field(ge=1, le=100), WHOLE] | SkipJsonSchema[None] = Field(
        None,
        description="Most hits returned; default NMAFC_RETRIEVAL_TOP_K (20). The context is "
        "rendered from the best fused candidates whatever this is.",
    )
    budget_tokens: Annotated[int, Field(ge=1, le=100_000), WHOLE] | SkipJsonSchema[None] = Field(
        None, description="Context budget; default NMAFC_RETRIEVAL_BUDGET_TOKENS."
    )
    as_of: TurnNumber | Timestamp | SkipJsonSchema[None] = Field(
        None,
        description="Point in time: a turn number (≥ 0; 0 is before the first message), or "
        "an ISO 8601 date-time from 1970-01-01T00:00:00Z on.",
    )
    include_invalidated: bool = Field(False, description="Also match superseded facts.")
    include_archived: bool = Field(True, description="Also match facts pruned into the archive.")
    scope: Reach = Field("conversation", description="Search this conversation or the agent.")
    reinforce: bool = Field(True, description="Strengthen the recalled facts (LTP).")

    @model_validator(mode="after")
    def _finite_turn(self) -> SearchRequest:
        if isinstance(self.as_of, float) and not math.isfinite(self.as_of):
            raise ValueError("`as_of` must be finite")
        return self


class PatchMemory(Request):
    """New content (a new version) and/or a new tier; at least one of the two."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"anyOf": [{"required": ["content"]}, {"required": ["tier"]}]},
    )

    content: Annotated[Said, Field(max_length=10_000)] | SkipJsonSchema[None] = None
    tier: TierName | SkipJsonSchema[None] = None
    expected_version: Annotated[int, Field(ge=1), WHOLE] | SkipJsonSchema[None] = Field(
        None, description="Apply only if the memory is still at this version (else 409)."
    )

    @model_validator(mode="after")
    def _something(self) -> PatchMemory:
        if self.content is None and self.tier is None:
            raise ValueError("send `content` and/or `tier`")
        return self


class RollbackRequest(Request):
    to_turn: float = Field(ge=0, le=1e12, description="Turn to return the conversation to.")

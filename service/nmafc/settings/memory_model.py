"""The memory model: decay, reinforcement, consolidation, extraction, retrieval."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from nmafc.core.decay import DecayParams
from nmafc.core.reinforcement import UseRule
from nmafc.core.tiers import Tier


class DecaySettings(BaseModel):
    """Forgetting and strengthening constants (SPEC §3)."""

    clock: Literal["turns", "hours"] = Field(
        "turns", description="What time means for decay: the scope's turn counter, or wall hours."
    )
    lambda_core_anchor: float = Field(0.0, ge=0, description="Decay rate of CoreAnchor.")
    lambda_active_context: float = Field(0.005, ge=0, description="Decay rate of ActiveContext.")
    lambda_ephemeral_state: float = Field(0.69, ge=0, description="Decay rate of EphemeralState.")
    eta: float = Field(0.15, ge=0, description="How much each reinforcement slows decay.")
    w_prune: float = Field(0.1, gt=0, lt=1, description="Weight at which a record is pruned.")

    def params(self) -> DecayParams:
        """The pure-core view of these settings."""
        return DecayParams(
            lambdas={
                Tier.CORE_ANCHOR: self.lambda_core_anchor,
                Tier.ACTIVE_CONTEXT: self.lambda_active_context,
                Tier.EPHEMERAL_STATE: self.lambda_ephemeral_state,
            },
            eta=self.eta,
            w_prune=self.w_prune,
        )


class ReinforcementSettings(BaseModel):
    """Reinforcement on use (SPEC §3): which recalled facts count as used, and how often."""

    min_cosine: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="A recalled fact counts as used only if its cosine with the question is "
        "at least this, so a scope where nothing is about the question strengthens nothing.",
    )
    relative_to_best: float = Field(
        0.8,
        ge=0.0,
        le=1.0,
        description="... and at least this share of the best fact hit's cosine, so only what "
        "is about as close to the question as its best match is strengthened.",
    )
    max_used: int = Field(
        3,
        ge=1,
        description="Most facts one recall strengthens: the first that pass both floors, in "
        "rank order. A question is answered by a few facts; one naming a person would "
        "otherwise strengthen everything about them.",
    )
    min_spacing: float = Field(
        1.0,
        ge=0.0,
        description="A used fact is reinforced at most once per this much of the decay clock "
        "(turns, or hours with decay.clock=hours): asking again before the conversation "
        "moves on does not raise its k. 0 reinforces on every question.",
    )

    def rule(self) -> UseRule:
        """The pure-core view of these settings."""
        return UseRule(self.min_cosine, self.relative_to_best, self.max_used, self.min_spacing)


class ConsolidationSettings(BaseModel):
    """The consolidation ("REM") pass."""

    promote_k: int = Field(
        10, ge=1, description="Reinforcements after which ActiveContext becomes CoreAnchor."
    )
    merge_threshold: float = Field(
        0.95, gt=0, le=1.0, description="Cosine above which two facts merge into one."
    )
    merge_window: int = Field(
        500,
        ge=0,
        description="Most recent new facts a pass checks for near-duplicates (exact cosine "
        "against the whole working set); older unchecked ones are left as they are.",
    )
    every_turns: int = Field(
        50, ge=1, description="Run prune + consolidation once this many turns have passed."
    )
    inline: bool = Field(
        True,
        description="Run a due pass right after a write (library use); the HTTP service "
        "turns this off and runs passes as background services.",
    )


class ExtractionSettings(BaseModel):
    """How facts are drawn from messages when no LLM extractor is used."""

    min_importance: float = Field(
        0.3, ge=0.0, le=1.0, description="Sentences scoring below this are not remembered."
    )
    max_facts_per_message: int = Field(12, ge=1, description="Most facts kept from one message.")
    max_assistant_facts: int = Field(
        3,
        ge=0,
        description="Most facts kept from one assistant message (its most salient units); "
        "the whole reply is still stored as a turn and found by keyword search.",
    )
    override_min_cosine: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="An extracted fact overrides an older one of the same attribute only if "
        "their embeddings are at least this similar.",
    )


class RetrievalSettings(BaseModel):
    """Defaults for recall; a named preset picks the ranking policy."""

    preset: str = Field("default", description="Named retrieval preset.")
    budget_tokens: int = Field(1000, ge=50, description="Default context budget per recall.")
    top_k: int = Field(
        20,
        ge=1,
        le=100,
        description="Hits a search returns when it names no `top_k`. Only the list of hits: "
        "the context is rendered from the preset's rerank_top_k best candidates either way.",
    )

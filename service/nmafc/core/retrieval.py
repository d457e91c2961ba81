"""Retrieval policy as data: one pydantic model, and named presets to compare and log."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from nmafc.errors import InvalidInput


class RetrievalConfig(BaseModel):
    """Every knob of recall. Presets are instances of this; benchmarks log the one they used."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    vector_top_k: int = Field(30, ge=0, description="Hot vector hits taken into fusion.")
    keyword_top_k: int = Field(30, ge=0, description="Cold keyword hits over facts.")
    turn_top_k: int = Field(20, ge=0, description="Cold keyword hits over raw turns.")
    max_hops: int = Field(2, ge=0, le=4, description="Spreading activation depth.")
    graph_seeds: int = Field(5, ge=0, description="Top vector hits the graph walk starts from.")
    graph_limit: int = Field(30, ge=0, description="Most records spreading activation adds.")
    graph_max_fanout: int = Field(
        25, ge=1, description="Entities linked to more records than this are not walked."
    )
    fanout_limit: int = Field(
        30,
        ge=0,
        description='Most facts about the people an aggregate question names ("which '
        'cities has Jon visited?"), ranked by what it asks of them, added to fusion.',
    )
    rrf_k: int = Field(30, ge=1, description="Reciprocal Rank Fusion constant.")
    list_weights: dict[str, float] = Field(
        default_factory=lambda: {
            "vector": 1.0,
            "keyword": 1.0,
            "turns": 1.0,
            "dates": 1.0,
            "graph": 0.5,
            "fanout": 1.0,
        },
        description="Weight of each ranked list in fusion.",
    )
    weight_influence: float = Field(
        0.1,
        ge=0.0,
        le=1.0,
        description="How much a fact's decayed weight scales its fused score "
        "(a bounded multiplier: score · (1 − m + m·w)); never a filter.",
    )
    rerank_top_k: int = Field(
        60,
        ge=1,
        description="Candidates kept after fusion; the renderer packs them in order until "
        "the budget is full (compact facts make 1,000 tokens hold several dozen).",
    )
    hydrate_full_turns: int = Field(3, ge=0, description="Best source turns shown whole.")
    hydrate_lines: int = Field(
        3, ge=1, description="Sentences kept from a later turn hit (graded hydration)."
    )
    source_share: float = Field(
        0.45, ge=0.0, le=1.0, description="Most of the budget source turns may take."
    )
    aggregate_source_share: float = Field(
        0.2,
        ge=0.0,
        le=1.0,
        description="source_share for a list or count question: its items are many and "
        "short, so compact facts cover more of them than whole turns do.",
    )
    turn_for_fact: float = Field(
        1.3,
        ge=0.0,
        description="Show a fact's source turn instead of the fact when the turn costs at "
        "most this many times the fact line (0 disables).",
    )


PRESETS: dict[str, RetrievalConfig] = {
    "default": RetrievalConfig(),
    "facts_only": RetrievalConfig(turn_top_k=0, hydrate_full_turns=0, source_share=0.0),
    "no_graph": RetrievalConfig(max_hops=0, graph_limit=0),
    "vector_only": RetrievalConfig(
        keyword_top_k=0, turn_top_k=0, max_hops=0, graph_limit=0, fanout_limit=0
    ),
    "keyword_only": RetrievalConfig(vector_top_k=0, max_hops=0, graph_limit=0, fanout_limit=0),
}


def preset(name: str) -> RetrievalConfig:
    """The named preset, or :class:`InvalidInput` listing the valid names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise InvalidInput(
            f"Unknown retrieval preset {name!r}.",
            fix=f"Use one of: {', '.join(sorted(PRESETS))} (NMAFC_RETRIEVAL_PRESET).",
        ) from None

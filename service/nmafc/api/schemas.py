"""Request and response models of the HTTP API, and their mapping from engine values."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    WithJsonSchema,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from nmafc.core.events import Event, EventKind
from nmafc.core.facts import FactDraft
from nmafc.core.graph import EntityGraph
from nmafc.core.records import MemoryRecord
from nmafc.core.tiers import Tier
from nmafc.core.turns import MAX_MESSAGE_CHARS, Message, Turn
from nmafc.directory import Conversation
from nmafc.engine.engine import RecordPage, Stats
from nmafc.engine.history import PurgeReceipt, RecordHistory, RollbackResult
from nmafc.engine.recall import Hit, RecallResult
from nmafc.engine.writes import WriteResult
from nmafc.settings import DecaySettings

TierName = Literal["CoreAnchor", "ActiveContext", "EphemeralState"]
EventKindName = Literal[
    "turn", "add", "update", "invalidate", "reinforce", "prune", "elevate", "merge",
    "relink", "delete", "rollback", "purge", "import",
]  # fmt: skip
Reach = Literal["conversation", "agent"]
ID_PATTERN = r"^[A-Za-z0-9._:@-]{1,128}$"


def _storable(value: str) -> str:
    """Text every store can keep: valid UTF-8 (no lone surrogates) and no NUL."""
    if "\x00" in value:
        raise ValueError("text must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text must be valid Unicode (no lone surrogates)") from exc
    return value


def _sane_time(value: datetime) -> datetime:
    """Aware UTC, from a year between 1000 and 8999 (dates near the calendar's ends overflow
    when relative expressions like "next year" are resolved against them)."""
    if not 1000 <= value.year <= 8999:
        raise ValueError("the year must be between 1000 and 8999")
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return aware.astimezone(UTC)


def _whole(value: Any) -> Any:
    """JSON Schema's integers include 3.0; strict validation otherwise refuses it."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


YEAR_RANGE = r"^[1-8][0-9]{3}-"
WHOLE = BeforeValidator(_whole)
# Text with at least one non-blank character (the engine refuses blank text).
# Patterns keep the schema, the validators and the engine in agreement: text holds no NUL
# (PostgreSQL cannot store it), and "said" text has a character that is blank neither to
# Python's str.strip() nor to JSON Schema's \s.
_BLANK = r"\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
TEXT_PATTERN = r"^[^\x00]*$"
SAID_PATTERN = rf"^[^\x00]*[^\x00{_BLANK}][^\x00]*$"
Text = Annotated[str, Field(pattern=TEXT_PATTERN), AfterValidator(_storable)]
Said = Annotated[str, Field(pattern=SAID_PATTERN), AfterValidator(_storable)]
Timestamp = Annotated[
    datetime, Strict(False), AfterValidator(_sane_time), WithJsonSchema(
        {"type": "string", "format": "date-time", "pattern": YEAR_RANGE}
    ),
]  # fmt: skip


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Request(Model):
    """A request body, read as its schema says: no unknown fields, no explicit nulls (omit
    the field), no coercion (``false`` is not the number 0, ``"5"`` is not 5)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            nulls = sorted(str(k) for k, v in data.items() if v is None)
            if nulls:
                raise ValueError(f"`{nulls[0]}` must not be null; omit it instead")
        return data


# -- requests -------------------------------------------------------------------------


class MessageIn(Request):
    role: Said = Field("user", max_length=32, description="user, assistant, …")
    content: Said = Field(max_length=MAX_MESSAGE_CHARS, description="What was said.")
    speaker: Annotated[Said, Field(max_length=128)] | SkipJsonSchema[None] = Field(
        None, description="Name to attribute first person to."
    )
    timestamp: Timestamp | SkipJsonSchema[None] = Field(
        None, description="When it was said (resolves 'yesterday'); default: now."
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


class AddMessages(Request):
    """Conversation messages: each is stored as a turn and its facts are extracted."""

    messages: list[MessageIn] = Field(min_length=1, max_length=500)


class AddFacts(Request):
    """Explicit facts, stored as given (no turns)."""

    facts: list[FactIn] = Field(min_length=1, max_length=1000)


AddMemories = AddMessages | AddFacts


class SearchRequest(Request):
    query: Said = Field(max_length=4000)
    top_k: Annotated[int, Field(ge=1, le=100), WHOLE] | SkipJsonSchema[None] = Field(
        None, description="Most hits returned."
    )
    budget_tokens: Annotated[int, Field(ge=1, le=100_000), WHOLE] | SkipJsonSchema[None] = Field(
        None, description="Context budget; default NMAFC_RETRIEVAL_BUDGET_TOKENS."
    )
    as_of: float | Timestamp | SkipJsonSchema[None] = Field(
        None, description="Point in time: a turn number, or an ISO 8601 timestamp."
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


# -- responses ------------------------------------------------------------------------


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


class Memory(Model):
    id: str
    agent_id: str
    conversation_id: str
    entity: str
    content: str
    tier: TierName
    version: int
    valid: bool
    weight0: float
    anchor_turn: float
    k: int = Field(description="Times reinforced.")
    importance: float
    related_entities: list[str]
    source_turn_ids: list[int]
    valid_at: float
    valid_at_time: datetime
    invalid_at: float | None
    invalid_at_time: datetime | None
    invalid_reason: str | None
    expires_turn: float | None = Field(description="Turn at which it is pruned; null: never.")
    created_at: datetime

    @classmethod
    def of(cls, r: MemoryRecord) -> Memory:
        return cls(
            id=r.id,
            agent_id=r.agent_id,
            conversation_id=r.conversation_id,
            entity=r.entity,
            content=r.content,
            tier=r.tier.value,
            version=r.version,
            valid=r.is_valid,
            weight0=r.weight0,
            anchor_turn=r.anchor_turn,
            k=r.k,
            importance=r.importance,
            related_entities=list(r.related_entities),
            source_turn_ids=list(r.source_turn_ids),
            valid_at=r.valid_at,
            valid_at_time=r.valid_at_time,
            invalid_at=_finite(r.invalid_at),
            invalid_at_time=r.invalid_at_time,
            invalid_reason=r.invalid_reason,
            expires_turn=_finite(r.expires_turn),
            created_at=r.created_at,
        )


class TurnOut(Model):
    id: int
    conversation_id: str
    turn: float
    role: str
    speaker: str
    content: str
    occurred_at: datetime

    @classmethod
    def of(cls, t: Turn) -> TurnOut:
        return cls(
            id=t.id,
            conversation_id=t.conversation_id,
            turn=t.turn,
            role=t.role,
            speaker=t.speaker,
            content=t.content,
            occurred_at=t.occurred_at,
        )


class AddResult(Model):
    turn: float = Field(description="The conversation's turn after this write.")
    turns: list[TurnOut]
    added: list[Memory]
    invalidated: list[Memory]

    @classmethod
    def of(cls, w: WriteResult) -> AddResult:
        return cls(
            turn=w.turn,
            turns=[TurnOut.of(t) for t in w.turns],
            added=[Memory.of(r) for r in w.added],
            invalidated=[Memory.of(r) for r in w.invalidated],
        )


class ScoreBreakdownOut(Model):
    fused: float
    vector: float | None
    keyword: float | None
    graph_hops: int | None
    weight: float | None
    ranks: dict[str, int]


class HitOut(Model):
    kind: Literal["fact", "turn"]
    id: str
    content: str
    score: float
    breakdown: ScoreBreakdownOut
    memory: Memory | None
    turn: TurnOut | None

    @classmethod
    def of(cls, h: Hit) -> HitOut:
        b = h.breakdown
        return cls(
            kind=h.kind,
            id=h.id,
            content=h.content,
            score=_finite(h.score) or 0.0,
            breakdown=ScoreBreakdownOut(
                fused=_finite(b.fused) or 0.0,
                vector=_finite(b.vector),
                keyword=_finite(b.keyword),
                graph_hops=b.graph_hops,
                weight=_finite(b.weight),
                ranks=dict(b.ranks),
            ),
            memory=Memory.of(h.record) if h.record is not None else None,
            turn=TurnOut.of(h.turn) if h.turn is not None else None,
        )


class SearchResult(Model):
    query: str
    context: str = Field(description="The rendered, dated, token-budgeted context.")
    tokens: int
    hits: list[HitOut]
    fact_ids: list[str]
    turn_ids: list[int]
    reinforced: int
    preset: str

    @classmethod
    def of(cls, r: RecallResult) -> SearchResult:
        return cls(
            query=r.query,
            context=r.context,
            tokens=r.tokens,
            hits=[HitOut.of(h) for h in r.hits],
            fact_ids=list(r.fact_ids),
            turn_ids=list(r.turn_ids),
            reinforced=r.reinforced,
            preset=r.preset,
        )


class MemoryPage(Model):
    items: list[Memory]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null: done.")

    @classmethod
    def of(cls, page: RecordPage) -> MemoryPage:
        cursor = None if page.next_after is None else str(page.next_after)
        return cls(items=[Memory.of(r) for r in page.records], next_cursor=cursor)


CURSOR_PATTERN = r"^[0-9]{1,18}$"  # a position in the log of facts; any such value is valid


class EventOut(Model):
    id: int
    seq: int
    kind: EventKindName
    turn: float
    agent_id: str | None
    conversation_id: str | None = Field(description="`*` for an agent-wide purge.")
    record_id: str | None
    created_at: datetime
    records: list[Memory] = Field(description="Each record's state after the event.")
    detail: dict[str, Any]

    @classmethod
    def of(cls, e: Event) -> EventOut:
        return cls(
            id=e.id,
            seq=e.seq,
            kind=e.kind.value,
            turn=e.turn,
            agent_id=e.agent_id,
            conversation_id=e.conversation_id,
            record_id=e.record_id,
            created_at=e.created_at,
            records=[Memory.of(r) for r in e.upserts],
            detail=dict(e.detail),
        )


class EventPage(Model):
    items: list[EventOut]
    next_after_id: int = Field(
        description="Pass as `after_id` for the events after this page (to poll for new ones)."
    )


class MemoryHistory(Model):
    record_id: str
    versions: list[Memory]
    events: list[EventOut]

    @classmethod
    def of(cls, h: RecordHistory) -> MemoryHistory:
        return cls(
            record_id=h.record_id,
            versions=[Memory.of(v) for v in h.versions],
            events=[EventOut.of(e) for e in h.events],
        )


class RollbackOut(Model):
    to_turn: float
    restored: int
    removed: int
    turns_retracted: int
    event_id: int | None

    @classmethod
    def of(cls, r: RollbackResult) -> RollbackOut:
        return cls(
            to_turn=r.to_turn,
            restored=r.restored,
            removed=r.removed,
            turns_retracted=r.turns_retracted,
            event_id=r.event_id,
        )


class PurgeReceiptOut(Model):
    scope: str
    cold: dict[str, int] = Field(description="Rows deleted from the Cold ROM, per table.")
    hot_rows: int = Field(description="Rows deleted from the Hot store.")
    tombstone_event_id: int | None

    @classmethod
    def of(cls, r: PurgeReceipt) -> PurgeReceiptOut:
        return cls(
            scope=r.scope, cold=dict(r.cold), hot_rows=r.hot_rows,
            tombstone_event_id=r.tombstone_event_id,
        )  # fmt: skip


class GraphNode(Model):
    entity: str
    records: int
    tiers: dict[str, int]


class GraphEdge(Model):
    source: str
    target: str
    weight: int


class GraphOut(Model):
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool

    @classmethod
    def of(cls, g: EntityGraph) -> GraphOut:
        return cls(
            nodes=[GraphNode(entity=n.entity, records=n.records, tiers=n.tiers) for n in g.nodes],
            edges=[GraphEdge(source=e.source, target=e.target, weight=e.weight) for e in g.edges],
            truncated=g.truncated,
        )


class DecayOut(Model):
    """The decay constants weights are computed with: w = w0·exp(−λ·e^(−η·k)·(t − anchor))."""

    clock: Literal["turns", "hours"] = Field(description="What `t` counts.")
    lambdas: dict[str, float] = Field(description="Decay rate per tier.")
    eta: float = Field(description="How much each reinforcement slows decay.")
    w_prune: float = Field(description="Weight at which a record is pruned.")

    @classmethod
    def of(cls, d: DecaySettings) -> DecayOut:
        lambdas = {
            "CoreAnchor": d.lambda_core_anchor,
            "ActiveContext": d.lambda_active_context,
            "EphemeralState": d.lambda_ephemeral_state,
        }
        return cls(clock=d.clock, lambdas=lambdas, eta=d.eta, w_prune=d.w_prune)


class StatsOut(Model):
    scope: str
    turn: float
    records: dict[str, int] = Field(description="Valid records per tier.")
    invalidated: dict[str, int] = Field(description="Invalidated records per reason.")
    turns: int
    events: dict[str, int]
    hot_rows: int
    mean_weight: float | None
    weight_histogram: list[int] = Field(description="Valid records per weight decile.")
    decay: DecayOut

    @classmethod
    def of(cls, s: Stats, decay: DecaySettings) -> StatsOut:
        return cls(
            scope=s.scope,
            turn=s.turn,
            records=dict(s.records),
            invalidated=dict(s.invalidated),
            turns=s.turns,
            events=dict(s.events),
            hot_rows=s.hot_rows,
            mean_weight=_finite(s.mean_weight),
            weight_histogram=list(s.weight_histogram),
            decay=DecayOut.of(decay),
        )


class ConversationOut(Model):
    conversation_id: str
    turn: float = Field(description="The conversation's clock.")


class AgentOut(Model):
    agent_id: str
    conversations: list[ConversationOut]


class ScopesOut(Model):
    bound_agent: str | None = Field(
        description="The agent the API key is bound to; null: an admin key or an open "
        "service, which name the agent with X-Agent-ID."
    )
    agents: list[AgentOut]
    truncated: bool = Field(description="More conversations exist than `limit`.")

    @classmethod
    def of(cls, bound: str | None, found: list[Conversation], truncated: bool) -> ScopesOut:
        agents: dict[str, list[ConversationOut]] = {}
        for c in found:
            agents.setdefault(c.agent_id, []).append(
                ConversationOut(conversation_id=c.conversation_id, turn=c.turn)
            )
        return cls(
            bound_agent=bound,
            agents=[AgentOut(agent_id=a, conversations=cs) for a, cs in agents.items()],
            truncated=truncated,
        )


class Health(Model):
    status: Literal["ok"]


class Ready(Model):
    status: Literal["ready", "degraded"] = Field(
        description="degraded: the Hot store (S3) is unreachable; writes are still "
        "acknowledged by the Cold ROM and reads served from RAM or the Cold ROM."
    )
    stores: dict[str, str]


class Problem(BaseModel):
    """RFC 9457 problem details, plus the stable ``code`` and the ``fix``."""

    type: str = Field(description="urn:nmafc:error:<code>")
    title: str
    status: int
    detail: str
    fix: str = Field(description="What to change: a setting, a header or an install extra.")
    code: str
    request_id: str | None
    errors: list[dict[str, Any]] | None = Field(
        None, description="Per-field validation errors (422 only)."
    )


KINDS: frozenset[str] = frozenset(k.value for k in EventKind)

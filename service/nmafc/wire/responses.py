"""Response models of the HTTP API: pydantic over plain values, no engine or store types.

The mapping from engine values lives beside the routes (``nmafc/api/converters.py``);
here only models built from the domain core's own values have an ``of``.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
)

from nmafc.core.events import Event, EventKind
from nmafc.core.graph import EntityGraph
from nmafc.core.records import MemoryRecord
from nmafc.core.turns import Turn
from nmafc.wire.base import (
    EventKindName,
    Model,
    TierName,
)


def finite(value: float | None) -> float | None:
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
        return cls(**memory_fields(r))


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
        return cls(**turn_fields(t))


class AddResult(Model):
    turn: float = Field(description="The conversation's turn after this write.")
    turns: list[TurnOut]
    added: list[Memory]
    invalidated: list[Memory]


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


class SearchResult(Model):
    query: str
    context: str = Field(description="The rendered, dated, token-budgeted context.")
    tokens: int
    hits: list[HitOut]
    fact_ids: list[str]
    turn_ids: list[int]
    reinforced: int
    preset: str


def memory_fields(r: MemoryRecord) -> dict[str, Any]:
    return {
        "id": r.id,
        "agent_id": r.agent_id,
        "conversation_id": r.conversation_id,
        "entity": r.entity,
        "content": r.content,
        "tier": r.tier.value,
        "version": r.version,
        "valid": r.is_valid,
        "weight0": r.weight0,
        "anchor_turn": r.anchor_turn,
        "k": r.k,
        "importance": r.importance,
        "related_entities": list(r.related_entities),
        "source_turn_ids": list(r.source_turn_ids),
        "valid_at": r.valid_at,
        "valid_at_time": r.valid_at_time,
        "invalid_at": finite(r.invalid_at),
        "invalid_at_time": r.invalid_at_time,
        "invalid_reason": r.invalid_reason,
        "expires_turn": finite(r.expires_turn),
        "created_at": r.created_at,
    }


def turn_fields(t: Turn) -> dict[str, Any]:
    return {
        "id": t.id,
        "conversation_id": t.conversation_id,
        "turn": t.turn,
        "role": t.role,
        "speaker": t.speaker,
        "content": t.content,
        "occurred_at": t.occurred_at,
    }


class MemoryPage(Model):
    items: list[Memory]
    next_cursor: str | None = Field(description="Pass as `cursor` for the next page; null: done.")


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
    closed: list[str] = Field(
        default_factory=list,
        description="Ids of records the event closed without a copy of their state: a "
        "prune names many per event (`detail.reason` says why). Each one's last state is "
        "its latest version in `GET /v1/memories/{memory_id}/history`.",
    )
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
            closed=list(e.closed),
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


class RollbackOut(Model):
    to_turn: float
    restored: int
    removed: int
    turns_retracted: int
    event_id: int | None


class ErasureOut(Model):
    steps: list[str] = Field(
        description="Physical steps taken after the delete, e.g. `secure_delete`, "
        "`fts_optimize`, `wal_truncate` (SQLite), `vacuum` (PostgreSQL), `compacted`, "
        "`old_versions_removed` (LanceDB)."
    )
    complete: bool = Field(
        description="Every file the store tracks that held the purged bytes was rewritten "
        "or removed (WAL archives and backups are the operator's). False: `note` says what "
        "remains and what removes it (e.g. `nmafc erase`)."
    )
    counts: dict[str, int] = Field(description="What the steps did (fragments, versions, ms).")
    note: str | None


class PurgeReceiptOut(Model):
    scope: str
    cold: dict[str, int] = Field(description="Rows deleted from the Cold ROM, per table.")
    hot_rows: int = Field(description="Rows deleted from the Hot store.")
    tombstone_event_id: int | None
    erased: dict[str, ErasureOut] = Field(
        description="How each store (`cold`, `hot`) erased the deleted rows physically."
    )


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


class OpenAIErrorDetail(BaseModel):
    """An error as OpenAI's API reports one, with NMAFC's ``code``, ``fix`` and request id."""

    message: str = Field(
        description="What went wrong, then `Fix:` and what to change (the text OpenAI SDKs "
        "put in their exception)."
    )
    type: str = Field(
        description="invalid_request_error, authentication_error, permission_error, "
        "not_found_error, rate_limit_error or server_error."
    )
    param: str | None = Field(None, description="The field at fault (422), e.g. `messages`.")
    code: str = Field(description="NMAFC's stable error code (see the error catalogue).")
    fix: str = Field(description="What to change: a setting, a header or a field.")
    request_id: str | None
    errors: list[dict[str, Any]] | None = Field(
        None, description="Per-field validation errors (422 only)."
    )


class OpenAIError(BaseModel):
    """The error body of the chat proxy's routes (``/v1/chat/*``, ``/v1/models``)."""

    error: OpenAIErrorDetail


KINDS: frozenset[str] = frozenset(k.value for k in EventKind)

"""Response models of the HTTP API, and their mapping from engine values."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
)
from pydantic_core import to_json

from nmafc.api.schemas.base import (
    EventKindName,
    Model,
    TierName,
)
from nmafc.core.events import Event, EventKind
from nmafc.core.graph import EntityGraph
from nmafc.core.records import MemoryRecord
from nmafc.core.turns import Turn
from nmafc.directory import Conversation
from nmafc.engine.engine import RecordPage, Stats
from nmafc.engine.history import PurgeReceipt, RecordHistory, RollbackResult
from nmafc.engine.recall import Hit, RecallResult
from nmafc.engine.writes import WriteResult
from nmafc.settings.memory_model import DecaySettings
from nmafc.storage.erasure import Erasure


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
        return cls(**_memory_fields(r))


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
        return cls(**_turn_fields(t))


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
        return cls.model_validate(_hit_fields(h))


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
        return cls.model_validate(_search_fields(r))


def search_result_json(r: RecallResult) -> bytes:
    """``SearchResult.of(r).model_dump_json()``, byte for byte, without building the models.

    A search answers with dozens of hits, each with its record; building and validating
    their models held the GIL for ≈ 0.5 ms per search, a tenth of a search's Python time.
    The values come from the engine already typed, so pydantic-core serialises the plain
    fields in the models' field order (a test compares both outputs).
    """
    return to_json(_search_fields(r))


def _memory_fields(r: MemoryRecord) -> dict[str, Any]:
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
        "invalid_at": _finite(r.invalid_at),
        "invalid_at_time": r.invalid_at_time,
        "invalid_reason": r.invalid_reason,
        "expires_turn": _finite(r.expires_turn),
        "created_at": r.created_at,
    }


def _turn_fields(t: Turn) -> dict[str, Any]:
    return {
        "id": t.id,
        "conversation_id": t.conversation_id,
        "turn": t.turn,
        "role": t.role,
        "speaker": t.speaker,
        "content": t.content,
        "occurred_at": t.occurred_at,
    }


def _hit_fields(h: Hit) -> dict[str, Any]:
    b = h.breakdown
    return {
        "kind": h.kind,
        "id": h.id,
        "content": h.content,
        "score": _finite(h.score) or 0.0,
        "breakdown": {
            "fused": _finite(b.fused) or 0.0,
            "vector": _finite(b.vector),
            "keyword": _finite(b.keyword),
            "graph_hops": b.graph_hops,
            "weight": _finite(b.weight),
            "ranks": dict(b.ranks),
        },
        "memory": _memory_fields(h.record) if h.record is not None else None,
        "turn": _turn_fields(h.turn) if h.turn is not None else None,
    }


def _search_fields(r: RecallResult) -> dict[str, Any]:
    return {
        "query": r.query,
        "context": r.context,
        "tokens": r.tokens,
        "hits": [_hit_fields(h) for h in r.hits],
        "fact_ids": list(r.fact_ids),
        "turn_ids": list(r.turn_ids),
        "reinforced": r.reinforced,
        "preset": r.preset,
    }


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

    @classmethod
    def of(cls, e: Erasure) -> ErasureOut:
        return cls(steps=list(e.steps), complete=e.complete, counts=dict(e.counts), note=e.note)


class PurgeReceiptOut(Model):
    scope: str
    cold: dict[str, int] = Field(description="Rows deleted from the Cold ROM, per table.")
    hot_rows: int = Field(description="Rows deleted from the Hot store.")
    tombstone_event_id: int | None
    erased: dict[str, ErasureOut] = Field(
        description="How each store (`cold`, `hot`) erased the deleted rows physically."
    )

    @classmethod
    def of(cls, r: PurgeReceipt) -> PurgeReceiptOut:
        return cls(
            scope=r.scope, cold=dict(r.cold), hot_rows=r.hot_rows,
            tombstone_event_id=r.tombstone_event_id,
            erased={store: ErasureOut.of(e) for store, e in r.erased.items()},
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

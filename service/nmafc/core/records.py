"""A memory record: one self-contained fact with its strength and validity window."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier, parse_tier


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One fact. Times called ``*_turn`` are on the scope's clock (turns or hours)."""

    id: str
    agent_id: str
    conversation_id: str
    entity: str
    content: str
    tier: Tier
    weight0: float = 1.0
    anchor_turn: float = 0.0
    k: int = 0
    importance: float = 0.5
    related_entities: tuple[str, ...] = ()
    source_turn_ids: tuple[int, ...] = ()
    valid_at: float = 0.0
    valid_at_time: datetime = field(default_factory=utcnow)
    invalid_at: float | None = None
    invalid_at_time: datetime | None = None
    invalid_reason: str | None = None
    created_at: datetime = field(default_factory=utcnow)
    expires_turn: float = math.inf
    version: int = 1

    @property
    def scope(self) -> Scope:
        return Scope(self.agent_id, self.conversation_id)

    @property
    def is_valid(self) -> bool:
        return self.invalid_at is None

    def evolve(self, **changes: Any) -> MemoryRecord:
        """A copy with ``changes`` applied."""
        return replace(self, **changes)

    def to_payload(self) -> dict[str, Any]:
        """A JSON-safe dict; the form records take in the event log and snapshots."""
        return {
            "id": self.id,
            "agent_id": self.agent_id,
            "conversation_id": self.conversation_id,
            "entity": self.entity,
            "content": self.content,
            "tier": self.tier.value,
            "weight0": self.weight0,
            "anchor_turn": self.anchor_turn,
            "k": self.k,
            "importance": self.importance,
            "related_entities": list(self.related_entities),
            "source_turn_ids": list(self.source_turn_ids),
            "valid_at": self.valid_at,
            "valid_at_time": self.valid_at_time.isoformat(),
            "invalid_at": self.invalid_at,
            "invalid_at_time": self.invalid_at_time.isoformat() if self.invalid_at_time else None,
            "invalid_reason": self.invalid_reason,
            "created_at": self.created_at.isoformat(),
            "expires_turn": None if math.isinf(self.expires_turn) else self.expires_turn,
            "version": self.version,
        }

    @classmethod
    def from_payload(cls, data: dict[str, Any]) -> MemoryRecord:
        """Inverse of :meth:`to_payload`."""
        expires = data.get("expires_turn")
        invalid_time = data.get("invalid_at_time")
        return cls(
            id=str(data["id"]),
            agent_id=str(data["agent_id"]),
            conversation_id=str(data["conversation_id"]),
            entity=str(data["entity"]),
            content=str(data["content"]),
            tier=parse_tier(data["tier"]),
            weight0=float(data["weight0"]),
            anchor_turn=float(data["anchor_turn"]),
            k=int(data["k"]),
            importance=float(data["importance"]),
            related_entities=tuple(data.get("related_entities") or ()),
            source_turn_ids=tuple(int(t) for t in data.get("source_turn_ids") or ()),
            valid_at=float(data["valid_at"]),
            valid_at_time=datetime.fromisoformat(data["valid_at_time"]),
            invalid_at=None if data.get("invalid_at") is None else float(data["invalid_at"]),
            invalid_at_time=datetime.fromisoformat(invalid_time) if invalid_time else None,
            invalid_reason=data.get("invalid_reason"),
            created_at=datetime.fromisoformat(data["created_at"]),
            expires_turn=math.inf if expires is None else float(expires),
            version=int(data.get("version", 1)),
        )

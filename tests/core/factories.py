"""Plain-value factories for core tests."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

from nmafc.core.decay import DecayParams, with_expiry
from nmafc.core.records import MemoryRecord
from nmafc.core.tiers import Tier

_ids = itertools.count(1)
T0 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def record(**fields: Any) -> MemoryRecord:
    """A valid record with sensible defaults and ``expires_turn`` computed."""
    values: dict[str, Any] = {
        "id": f"r{next(_ids)}",
        "agent_id": "a",
        "conversation_id": "c",
        "entity": "caroline_support_group",
        "content": "Caroline went to an LGBTQ support group on 7 May 2023",
        "tier": Tier.ACTIVE_CONTEXT,
        "valid_at_time": T0,
        "created_at": T0,
    }
    values.update(fields)
    return with_expiry(MemoryRecord(**values), DecayParams())

"""What extractors and callers hand to the engine before a fact becomes a record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nmafc.core.tiers import Tier

if TYPE_CHECKING:  # numpy only types the vector: a draft is built without it (the client)
    import numpy as np
    import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class FactDraft:
    """A fact proposed by an extractor or given explicitly by a caller.

    ``message_index`` ties an extracted fact to the message (turn) it came from;
    ``overrides_entity`` names the entity whose current facts this one contradicts.
    """

    content: str
    entity: str
    tier: Tier = Tier.ACTIVE_CONTEXT
    importance: float = 0.5
    related_entities: tuple[str, ...] = ()
    overrides_entity: str | None = None
    message_index: int | None = None
    source_turn_ids: tuple[int, ...] = ()
    context: str | None = None
    """What the fact answers (the question just asked by someone else): embedded with the
    fact so "It was Matt" is found by "who played at the concert?", never rendered."""
    vector: npt.NDArray[np.float32] | None = field(default=None, compare=False)
    fallback: str | None = field(default=None, compare=False)
    """Why the configured extractor was replaced by the rules for this fact (logged with the
    turn event, so a fallback is visible in the event log and never silent)."""

"""The extractor interface."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from nmafc.core.facts import FactDraft
from nmafc.core.turns import Message


class Extractor(Protocol):
    """Proposes facts for a batch of messages; each draft names its ``message_index``."""

    name: str

    def extract(self, messages: Sequence[Message]) -> list[FactDraft]:
        """Facts found in ``messages`` (possibly none for filler)."""
        ...

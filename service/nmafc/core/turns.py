"""Conversation turns: what clients send, and what the Cold ROM keeps verbatim."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from nmafc.core.records import utcnow
from nmafc.errors import EmptyMessages, InvalidInput

MAX_MESSAGE_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class Message:
    """One incoming message. ``speaker`` defaults to the role; captions are extra text."""

    content: str
    role: str = "user"
    speaker: str | None = None
    occurred_at: datetime | None = None
    captions: tuple[str, ...] = ()

    @property
    def speaker_name(self) -> str:
        return self.speaker or self.role

    def full_text(self) -> str:
        """The content plus any attachment captions, as one searchable text."""
        if not self.captions:
            return self.content
        shared = " ".join(f"[shared an image: {c}]" for c in self.captions)
        return f"{self.content} {shared}".strip()


def dated(messages: Sequence[Message], default: datetime | None) -> list[Message]:
    """The messages of one call, each without a time given the time of the message before
    it; those before any dated message take ``default`` (the call's time, or now).

    A call is one stretch of conversation: an undated reply belongs beside the dated
    question it answers, not on the day it happened to be stored.
    """
    out: list[Message] = []
    previous = default
    for message in messages:
        if message.occurred_at is None and previous is not None:
            message = replace(message, occurred_at=previous)
        previous = message.occurred_at or previous
        out.append(message)
    return out


def validate_messages(messages: list[Message]) -> None:
    """Raise a typed error naming the fix if ``messages`` cannot be remembered."""
    if not messages:
        raise EmptyMessages("The message list is empty.")
    for index, message in enumerate(messages):
        if not message.content.strip() and not message.captions:
            raise EmptyMessages(f"Message {index} has empty content.")
        if len(message.content) > MAX_MESSAGE_CHARS:
            raise InvalidInput(
                f"Message {index} has {len(message.content)} characters.",
                fix=f"Split messages longer than {MAX_MESSAGE_CHARS} characters.",
            )
        if not message.role.strip():
            raise InvalidInput(f"Message {index} has an empty role.", fix="Set `role`.")


@dataclass(frozen=True, slots=True)
class Turn:
    """A stored message: its global id, its place on the scope clock and its text."""

    id: int
    agent_id: str
    conversation_id: str
    turn: float
    role: str
    speaker: str
    content: str
    occurred_at: datetime = field(default_factory=utcnow)
    extra: Mapping[str, Any] = field(default_factory=dict)
    retracted: bool = False

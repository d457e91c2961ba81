"""Memory around an OpenAI chat call, as plain values: what to recall for, what to inject,
what to remember. Shared by ``/v1/chat/completions``, ``nmafc.proxy`` and ``nmafc chat``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nmafc.core.answer_type import answer_type_line
from nmafc.core.turns import Message

# Fields NMAFC reads from a chat request and removes before forwarding it upstream
# (an upstream would reject them as unknown parameters).
MEMORY_FIELDS = ("memory_recall", "memory_remember", "agent_id", "conversation_id")
SCOPE_FIELDS = ("agent_id", "conversation_id")

PREAMBLE = (
    "Memory from earlier conversations with this user, recalled by NMAFC. Use it when it "
    "helps answer; it may be incomplete, and a fact marked with a later turn wins over an "
    "earlier one.\n\n"
)


@dataclass(frozen=True, slots=True)
class MemoryOptions:
    """The per-call switches and scope a chat request carried in its body."""

    recall: bool | None = None
    remember: bool | None = None
    agent_id: str | None = None
    conversation_id: str | None = None


def split_request(body: Mapping[str, Any]) -> tuple[dict[str, Any], MemoryOptions]:
    """The request to forward (memory fields removed, everything else untouched) and the
    memory options, read from the body or from ``metadata``."""
    forward = {k: v for k, v in body.items() if k not in MEMORY_FIELDS}
    metadata = body.get("metadata")
    found: dict[str, Any] = {}
    if isinstance(metadata, Mapping):
        found = {k: metadata[k] for k in SCOPE_FIELDS if k in metadata}
        rest = {k: v for k, v in metadata.items() if k not in SCOPE_FIELDS}
        if rest:
            forward["metadata"] = rest
        else:
            forward.pop("metadata", None)
    for key in SCOPE_FIELDS:
        if body.get(key) is not None:
            found[key] = body[key]
    return forward, MemoryOptions(
        recall=_flag(body.get("memory_recall")),
        remember=_flag(body.get("memory_remember")),
        agent_id=_text_or_none(found.get("agent_id")),
        conversation_id=_text_or_none(found.get("conversation_id")),
    )


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def content_text(content: Any) -> str:
    """The text of message content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        ).strip()
    return ""


def last_user_text(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """What to recall for: the text of the last user message, if it has any."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return content_text(message.get("content")) or None
    return None


def memory_preamble(context: str, question: str) -> str | None:
    """The system message carrying the recalled context (and the answer-type line)."""
    line = answer_type_line(question)
    if not context.strip() and line is None:
        return None
    text = PREAMBLE + context.strip() if context.strip() else ""
    if line is not None:
        text = f"{text}\n\n{line}" if text else line
    return text


def inject(messages: Sequence[Mapping[str, Any]], preamble: str | None) -> list[Any]:
    """The messages with the memory preamble as the first system message."""
    if preamble is None:
        return list(messages)
    return [{"role": "system", "content": preamble}, *messages]


def exchange(
    messages: Sequence[Mapping[str, Any]], reply: Mapping[str, Any] | None
) -> list[Message]:
    """What to remember of one call: the new user message and the assistant's answer.

    Only a request that ends with a user message brings a new user message (one ending
    with tool results continues an exchange whose user turn was remembered already).
    """
    remembered: list[Message] = []
    if messages and messages[-1].get("role") == "user":
        text = content_text(messages[-1].get("content"))
        if text:
            remembered.append(_message("user", text, messages[-1].get("name")))
    answer = content_text((reply or {}).get("content"))
    if answer:
        remembered.append(_message("assistant", answer, (reply or {}).get("name")))
    return remembered


def _message(role: str, text: str, name: Any) -> Message:
    return Message(content=text, role=role, speaker=name if isinstance(name, str) else None)


def reply_message(completion: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The assistant message of a ``chat.completion`` (its first choice)."""
    choices = completion.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        message = choices[0].get("message")
        return message if isinstance(message, Mapping) else None
    return None


class StreamedReply:
    """Accumulates the first choice's text from ``chat.completion.chunk`` objects."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def feed(self, chunk: Mapping[str, Any]) -> None:
        for choice in chunk.get("choices") or ():
            if isinstance(choice, Mapping) and choice.get("index", 0) == 0:
                delta = choice.get("delta") or {}
                if isinstance(delta, Mapping) and isinstance(delta.get("content"), str):
                    self.parts.append(delta["content"])

    @property
    def message(self) -> dict[str, Any]:
        return {"role": "assistant", "content": "".join(self.parts)}

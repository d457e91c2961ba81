"""``MemoryOpenAI``: memory for an ``openai.OpenAI`` / ``AsyncOpenAI`` client, in-process.

The same behaviour as ``/v1/chat/completions``, for apps that embed the library::

    from openai import OpenAI
    from nmafc import SyncMemory
    from nmafc.proxy import MemoryOpenAI

    client = MemoryOpenAI(OpenAI(), SyncMemory(agent_id="support-bot", conversation_id="ana"))
    client.chat.completions.create(model="gpt-4o-mini", messages=[...])

Each ``chat.completions.create`` recalls for the last user message, injects the context as
a system preamble, calls the wrapped client, and remembers the exchange once the reply
(or the whole stream) is in. ``memory_recall`` / ``memory_remember`` switch either off per
call. Every other attribute is the wrapped client's. Memory failures are logged and never
break the call.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import anyio.to_thread

from nmafc.core.chat import (
    StreamedReply,
    exchange,
    inject,
    last_user_text,
    memory_preamble,
    reply_message,
)
from nmafc.errors import InvalidInput
from nmafc.memory import Memory, SyncMemory

log = logging.getLogger(__name__)


def _as_dict(value: Any) -> dict[str, Any]:
    """An SDK object (pydantic) or a dict, as a plain dict."""
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    return dict(dump()) if callable(dump) else {}


def _switch(kwargs: dict[str, Any], name: str) -> bool:
    """A per-call memory switch: True, False, or absent / None for on. Anything else is
    refused before the call, so a privacy opt-out spelled ``"false"`` cannot read as on."""
    value = kwargs.pop(name, None)
    if value is None:
        return True
    if not isinstance(value, bool):
        raise InvalidInput(
            f"`{name}` is {value!r}, not a boolean.", fix=f"Pass {name}=True or {name}=False."
        )
    return value


class _Memory:
    """The memory steps around one call; a failure in either is logged and skipped."""

    def __init__(self, memory: SyncMemory, budget_tokens: int | None) -> None:
        self.memory = memory
        self.budget_tokens = budget_tokens

    def prepare(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], bool, list[Any]]:
        """The call's arguments with the preamble injected, whether to remember, and the
        caller's own messages."""
        recall = _switch(kwargs, "memory_recall")
        remember = _switch(kwargs, "memory_remember")
        messages = list(kwargs.get("messages") or [])
        question = last_user_text([_as_dict(m) for m in messages])
        if recall and question:
            try:
                result = self.memory.recall(question, budget_tokens=self.budget_tokens)
                preamble = memory_preamble(result.context if result.hits else "", question)
                kwargs["messages"] = inject(messages, preamble)
            except Exception as exc:
                log.warning("MemoryOpenAI: recall skipped: %s: %s", type(exc).__name__, exc)
        return kwargs, remember, messages

    def remember(self, messages: list[Any], reply: Mapping[str, Any] | None) -> None:
        turns = exchange([_as_dict(m) for m in messages], reply)
        if not turns:
            return
        try:
            self.memory.remember(turns)
        except Exception as exc:
            log.warning("MemoryOpenAI: remember skipped: %s: %s", type(exc).__name__, exc)


class _Completions:
    def __init__(self, inner: Any, memory: _Memory, is_async: bool) -> None:
        self._inner = inner
        self._memory = memory
        self._async = is_async

    def create(self, **kwargs: Any) -> Any:
        """``chat.completions.create`` with recall before and remembering after."""
        if self._async:
            return self._acreate(**kwargs)
        kwargs, remember, messages = self._memory.prepare(kwargs)
        result = self._inner.create(**kwargs)
        if not remember:
            return result
        if kwargs.get("stream"):
            return self._relay(result, messages)
        self._memory.remember(messages, reply_message(_as_dict(result)))
        return result

    def _relay(self, stream: Any, messages: list[Any]) -> Iterator[Any]:
        reply = StreamedReply()
        for chunk in stream:
            reply.feed(_as_dict(chunk))
            yield chunk
        self._memory.remember(messages, reply.message)

    async def _acreate(self, **kwargs: Any) -> Any:
        kwargs, remember, messages = await anyio.to_thread.run_sync(self._memory.prepare, kwargs)
        result = await self._inner.create(**kwargs)
        if not remember:
            return result
        if kwargs.get("stream"):
            return self._arelay(result, messages)
        reply = reply_message(_as_dict(result))
        await anyio.to_thread.run_sync(self._memory.remember, messages, reply)
        return result

    async def _arelay(self, stream: Any, messages: list[Any]) -> AsyncIterator[Any]:
        reply = StreamedReply()
        async for chunk in stream:
            reply.feed(_as_dict(chunk))
            yield chunk
        await anyio.to_thread.run_sync(self._memory.remember, messages, reply.message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class _Chat:
    def __init__(self, inner: Any, memory: _Memory, is_async: bool) -> None:
        self._inner = inner
        self.completions = _Completions(inner.completions, memory, is_async)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class MemoryOpenAI:
    """An OpenAI client (sync or async) whose chat completions remember and recall."""

    def __init__(
        self,
        client: Any,
        memory: SyncMemory | Memory | None = None,
        *,
        agent_id: str = "default",
        conversation_id: str = "default",
        budget_tokens: int | None = None,
    ) -> None:
        self._client = client
        if isinstance(memory, Memory):
            memory = memory._sync  # the same scope; calls run in worker threads here anyway
        self.memory = memory or SyncMemory(agent_id, conversation_id)
        self._owns_memory = memory is None
        budget = budget_tokens or self.memory.engine.settings.chat.budget_tokens
        is_async = _is_async(client)
        self.chat = _Chat(client.chat, _Memory(self.memory, budget), is_async)

    def close(self) -> None:
        """Close the memory if this wrapper opened it (the client stays the caller's)."""
        if self._owns_memory:
            self.memory.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def _is_async(client: Any) -> bool:
    try:
        import openai
    except ImportError:  # pragma: no cover - a client was passed, so openai is there
        return False
    return isinstance(client, openai.AsyncOpenAI)

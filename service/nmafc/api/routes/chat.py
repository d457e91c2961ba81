"""``/v1/chat/completions`` and ``/v1/models``: an OpenAI-compatible proxy with memory.

Per call: recall for the last user message, inject the context as a system preamble,
forward upstream, return the reply (streamed chunk by chunk when asked), then remember
the exchange. The exchange is committed to the Cold queue before the caller is answered
(for a stream: once it ended, before ``[DONE]``) and remembered from there after the
response, exactly once; a crash in between leaves it queued for the queue service.
Memory never blocks the call: when it fails the reply still goes out, marked
``X-NMAFC-Memory: skipped``.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from functools import partial
from typing import Annotated, Any, Literal

import anyio
from anyio.to_thread import run_sync
from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, StrictBool
from starlette.background import BackgroundTask

from nmafc import deadline
from nmafc.api.bodies import CheckedBodyRoute
from nmafc.api.deps import DEFAULT_CONVERSATION, PrincipalDep, StateDep
from nmafc.api.errors import openai_error_responses
from nmafc.api.state import AppState
from nmafc.core.chat import (
    MemoryOptions,
    StreamedReply,
    exchange,
    inject,
    last_user_text,
    memory_preamble,
    reply_message,
    split_request,
)
from nmafc.core.scope import Scope
from nmafc.engine.recall import RecallOptions
from nmafc.errors import InvalidScope, ProviderError, ProviderNotConfigured
from nmafc.providers.base import error_chunk
from nmafc.wire import ID_PATTERN

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["chat"], route_class=CheckedBodyRoute)

MEMORY_HEADER = "X-NMAFC-Memory"
MemoryStatus = Literal["ok", "skipped", "off"]


class ChatMessage(BaseModel):
    """An OpenAI chat message; every field the caller sends is forwarded as it is."""

    model_config = ConfigDict(extra="allow")
    role: str = Field(min_length=1, max_length=64)


class ChatRequest(BaseModel):
    """An OpenAI Chat Completions request plus NMAFC's optional memory fields.

    Fields not listed here (tools, response_format, temperature, …) are forwarded
    untouched; the memory fields are removed before forwarding.
    """

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(None, description="Upstream model; default NMAFC_LLM_MODEL.")
    messages: list[ChatMessage] = Field(min_length=1)
    # JSON booleans only: `"false"` or `0` for an opt-out must not read as "use the default".
    stream: StrictBool = False
    memory_recall: StrictBool | None = Field(
        None, description="Recall for this call (default NMAFC_CHAT_RECALL); true or false."
    )
    memory_remember: StrictBool | None = Field(
        None,
        description="Remember this exchange (default NMAFC_CHAT_REMEMBER); true or false.",
    )
    agent_id: str | None = Field(None, pattern=ID_PATTERN, description="Or X-Agent-ID.")
    conversation_id: str | None = Field(
        None, pattern=ID_PATTERN, description="Or X-Conversation-ID."
    )


AgentHeader = Annotated[
    str | None,
    Header(alias="X-Agent-ID", pattern=ID_PATTERN, description="The agent (or `agent_id`)."),
]
ConversationHeader = Annotated[
    str | None,
    Header(
        alias="X-Conversation-ID",
        pattern=ID_PATTERN,
        description="The conversation (or `conversation_id`); default `default`.",
    ),
]
# A plain integer (0: the setting) rather than an optional one: a nullable header would
# document `null` as a value a client could send.
BudgetHeader = Annotated[
    int,
    Header(
        alias="X-NMAFC-Budget",
        ge=0,
        le=100_000,
        description="Tokens of recalled context; 0 or absent: NMAFC_CHAT_BUDGET_TOKENS.",
    ),
]

_ID = re.compile(ID_PATTERN)


def _scope_id(value: str | None, name: str) -> str | None:
    """An id found in ``metadata`` (the body's own fields are validated by the model)."""
    if value is not None and not _ID.match(value):
        raise InvalidScope(f"metadata.{name} is not a valid id.", fix=f"Match {ID_PATTERN}.")
    return value


@router.post(
    "/chat/completions",
    response_class=JSONResponse,
    responses={
        200: {
            "description": "A `chat.completion`, or with `stream: true` an event stream of "
            "`chat.completion.chunk` objects ending `data: [DONE]`.",
            "content": {
                "application/json": {"schema": {"type": "object"}},
                "text/event-stream": {"schema": {"type": "string"}},
            },
        },
        **openai_error_responses(400, 401, 404, 413, 415, 422, 429, 502, 503, 504),
    },
)
async def chat_completions(
    body: ChatRequest,
    request: Request,
    state: StateDep,
    principal: PrincipalDep,
    agent_header: AgentHeader = None,
    conversation_header: ConversationHeader = None,
    budget: BudgetHeader = 0,
) -> Response:
    """OpenAI-compatible chat completion with recall before and remembering after."""
    if state.provider is None:
        raise ProviderNotConfigured("The chat proxy has no upstream LLM to forward to.")
    forward, options = split_request(await request.json())
    agent = principal.agent(agent_header or _scope_id(options.agent_id, "agent_id"))
    conversation = conversation_header or _scope_id(options.conversation_id, "conversation_id")
    call = ChatCall(state, Scope(agent, conversation or DEFAULT_CONVERSATION), options)
    forward["messages"] = inject(forward["messages"], await call.recall(forward, budget))
    if body.stream:
        chunks = await state.provider.stream(forward)  # errors here still get a status
        return StreamingResponse(
            call.relay(chunks, forward["messages"]),
            media_type="text/event-stream",
            headers={MEMORY_HEADER: call.status, "Cache-Control": "no-cache"},
            background=BackgroundTask(call.remember),
        )
    completion = await state.provider.complete(forward)
    await call.enqueue(exchange(forward["messages"], reply_message(completion)))
    return JSONResponse(
        completion,
        headers={MEMORY_HEADER: call.status},
        background=BackgroundTask(call.remember),
    )


@router.get(
    "/models",
    response_class=JSONResponse,
    responses={
        200: {
            "description": "The upstream's models (an OpenAI `list` object).",
            "content": {"application/json": {"schema": {"type": "object"}}},
        },
        **openai_error_responses(401, 429, 502, 503, 504),
    },
)
async def list_models(state: StateDep, _: PrincipalDep) -> JSONResponse:
    """The upstream LLM's models, passed through."""
    if state.provider is None:
        raise ProviderNotConfigured("The chat proxy has no upstream LLM to list models of.")
    return JSONResponse(await state.provider.models())


class ChatCall:
    """The memory side of one chat call; a memory failure only downgrades ``status``."""

    def __init__(self, state: AppState, scope: Scope, options: MemoryOptions) -> None:
        self.state = state
        self.scope = scope
        chat = state.settings.chat
        self.recalling = chat.recall if options.recall is None else options.recall
        self.remembering = chat.remember if options.remember is None else options.remember
        self.status: MemoryStatus = "ok" if self.recalling or self.remembering else "off"
        self.queued = False

    def _skipped(self, what: str, exc: Exception) -> None:
        self.status = "skipped"
        log.warning(
            "chat memory skipped (%s): %s: %s",
            what,
            type(exc).__name__,
            exc,
            extra={"event": "chat_memory_skipped", "step": what},
        )

    async def recall(self, request: dict[str, Any], budget: int) -> str | None:
        """The preamble to inject, or None (nothing recalled, recall off, or it failed)."""
        question = last_user_text(request.get("messages") or [])
        if not self.recalling or question is None:
            return None
        settings = self.state.settings
        options = RecallOptions(
            budget_tokens=budget or settings.chat.budget_tokens or settings.retrieval.budget_tokens
        )
        try:
            recall = partial(self.state.engine.recall, self.scope, question, options)
            with deadline.within(settings.server.request_timeout_s):
                result = await self.state.recall_threads.run(recall)
        except Exception as exc:  # memory must never take the call down with it
            self._skipped("recall", exc)
            return None
        return memory_preamble(result.context if result.hits else "", question)

    async def enqueue(self, messages: list[Any]) -> None:
        """Commit the exchange to the Cold queue (before the caller is answered)."""
        if not self.remembering or not messages:
            return
        try:
            await run_sync(self.state.engine.queue.enqueue, self.scope, messages)
        except Exception as exc:
            self._skipped("enqueue", exc)
            return
        self.queued = True

    async def remember(self) -> None:
        """After the response: remember what was queued (the queue service retries)."""
        if not self.queued:
            return
        delay = self.state.settings.chat.queue_delay_s
        if delay:
            await anyio.sleep(delay)
        try:
            await run_sync(self.state.engine.queue.drain, self.scope)
        except Exception as exc:
            log.warning(
                "remembering a chat exchange failed; it stays queued: %s: %s",
                type(exc).__name__,
                exc,
                extra={"event": "chat_remember_deferred"},
            )

    async def relay(
        self, chunks: AsyncIterator[dict[str, Any]], messages: list[Any]
    ) -> AsyncIterator[bytes]:
        """Upstream chunks as SSE, one event each; the exchange is queued before ``[DONE]``."""
        reply = StreamedReply()
        try:
            async for chunk in chunks:
                reply.feed(chunk)
                yield _event(chunk)
        except ProviderError as exc:
            # Headers are gone: the error travels as a last event, nothing is remembered.
            log.warning("upstream failed mid-stream: %s", exc.detail)
            yield _event(error_chunk(exc))
            return
        await self.enqueue(exchange(messages, reply.message))
        yield b"data: [DONE]\n\n"


def _event(payload: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(payload, separators=(',', ':'))}\n\n".encode()

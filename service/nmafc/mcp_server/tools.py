"""The MCP tools: their argument models (whose JSON Schemas the client sees) and handlers.

Every tool acts for the agent the caller's key decided (never an argument); the
conversation is the ``conversation_id`` argument, else the ``X-Conversation-ID`` header of
the HTTP request, else ``default``. Results are the REST API's JSON, as text and as
structured content; an NMAFC error comes back as a tool error (``isError``) whose text is
``{"error": {"code", "detail", "fix"}}``, so the model can read what to change.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal
from uuid import UUID

import mcp_types as types
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from nmafc.doors.backend import MemoryBackend
from nmafc.errors import InvalidInput, NmafcError
from nmafc.wire import (
    ID_PATTERN,
    MessageIn,
    PatchMemory,
    SearchRequest,
)

DEFAULT_CONVERSATION = "default"
Scope = Literal["conversation", "agent"]
Tier = Literal["CoreAnchor", "ActiveContext", "EphemeralState"]

ConversationArg = Annotated[
    str | None,
    Field(
        pattern=ID_PATTERN,
        description="The conversation (thread, user, session) to act on. Default: the "
        "X-Conversation-ID header of the connection, else `default`.",
    ),
]
ScopeArg = Annotated[
    Scope,
    Field(
        description="`conversation`: only this conversation; `agent`: every conversation "
        "of the agent."
    ),
]
MemoryIdArg = Annotated[
    UUID, Field(description="A memory's id (a UUID, as returned by the other tools).")
]


class Args(BaseModel):
    """Tool arguments: unknown fields are refused; ``null`` means "not given"."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data


class MessageArg(Args):
    role: str = Field("user", max_length=32, description="`user`, `assistant`, …")
    content: str = Field(min_length=1, description="What was said.")
    speaker: str | None = Field(None, max_length=128, description="Who said it (a name).")
    timestamp: str | None = Field(
        None, description="When it was said, ISO 8601 (e.g. 2024-05-08T13:56:00Z)."
    )


class AddMemoryArgs(Args):
    """``messages`` (a conversation excerpt) or ``text`` (one thing the user said)."""

    messages: list[MessageArg] | None = Field(
        None, min_length=1, max_length=500, description="Messages to remember, in order."
    )
    text: str | None = Field(
        None, min_length=1, description="Plain text to remember, as one user message."
    )
    speaker: str | None = Field(None, max_length=128, description="Who said `text`.")
    timestamp: str | None = Field(
        None, description="When `text` was said, ISO 8601. Resolves 'yesterday', 'next week'."
    )
    conversation_id: ConversationArg = None

    @model_validator(mode="after")
    def _one_of(self) -> AddMemoryArgs:
        if (self.messages is None) == (self.text is None):
            raise ValueError("send exactly one of `messages` or `text`")
        return self

    def to_messages(self) -> list[MessageIn]:
        """The REST API's message models (validated as ``POST /v1/memories`` would)."""
        if self.text is not None:
            given = [MessageArg(content=self.text, speaker=self.speaker, timestamp=self.timestamp)]
        else:
            given = self.messages or []
        return [MessageIn.model_validate(m.model_dump(exclude_none=True)) for m in given]


def _drop(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class SearchMemoriesArgs(Args):
    query: str = Field(min_length=1, max_length=4000, description="What to recall.")
    budget_tokens: int | None = Field(
        None, ge=1, le=100_000, description="Size of the returned context, in tokens."
    )
    top_k: int | None = Field(None, ge=1, le=100, description="Most hits returned.")
    as_of: str | float | None = Field(
        None,
        description="Recall as memory stood at a point in time: an ISO 8601 date-time, or a "
        "turn number of the conversation.",
    )
    scope: ScopeArg = "conversation"
    conversation_id: ConversationArg = None

    def to_request(self) -> SearchRequest:
        return SearchRequest.model_validate(
            _drop(
                {
                    "query": self.query,
                    "budget_tokens": self.budget_tokens,
                    "top_k": self.top_k,
                    "as_of": float(self.as_of) if isinstance(self.as_of, int) else self.as_of,
                    "scope": self.scope,
                }
            )
        )


class MemoryIdArgs(Args):
    memory_id: MemoryIdArg
    scope: ScopeArg = "conversation"
    conversation_id: ConversationArg = None


class ListMemoriesArgs(Args):
    limit: int = Field(50, ge=1, le=500, description="Memories per page.")
    cursor: str | None = Field(
        None, pattern=r"^[0-9]{1,19}$", description="`next_cursor` of the previous page."
    )
    tier: Tier | None = Field(None, description="Only memories of this tier.")
    entity: str | None = Field(None, max_length=200, description="Only memories about this.")
    include_invalidated: bool = Field(False, description="Also superseded/forgotten ones.")
    scope: ScopeArg = "conversation"
    conversation_id: ConversationArg = None


class UpdateMemoryArgs(Args):
    memory_id: MemoryIdArg
    content: str | None = Field(None, min_length=1, description="New text (a new version).")
    tier: Tier | None = Field(None, description="New tier: how long it is meant to live.")
    expected_version: int | None = Field(
        None, ge=1, description="Apply only if the memory is still at this version."
    )
    conversation_id: ConversationArg = None

    def to_patch(self) -> PatchMemory:
        fields = {"content": self.content, "tier": self.tier}
        return PatchMemory.model_validate(
            _drop({**fields, "expected_version": self.expected_version})
        )


class DeleteMemoryArgs(Args):
    memory_id: MemoryIdArg
    conversation_id: ConversationArg = None


class DeleteAllArgs(Args):
    scope: Scope = Field(
        "conversation",
        description="`conversation`: erase this conversation; `agent`: erase every "
        "conversation of the agent.",
    )
    conversation_id: ConversationArg = None


Handler = Callable[[MemoryBackend, str, Any], Awaitable[BaseModel]]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    args: type[Args]
    handler: Handler
    read_only: bool = False
    destructive: bool = False

    def tool(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=_schema(self.args),
            annotations=types.ToolAnnotations(
                title=self.title,
                read_only_hint=self.read_only,
                destructive_hint=self.destructive,
                idempotent_hint=self.read_only,
                open_world_hint=False,
            ),
        )


def _schema(model: type[Args]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    return schema


async def _add(b: MemoryBackend, conv: str, a: AddMemoryArgs) -> BaseModel:
    return await b.add(conv, a.to_messages())


async def _search(b: MemoryBackend, conv: str, a: SearchMemoriesArgs) -> BaseModel:
    return await b.search(conv, a.to_request())


async def _get(b: MemoryBackend, conv: str, a: MemoryIdArgs) -> BaseModel:
    return await b.get(conv, str(a.memory_id), a.scope)


async def _list(b: MemoryBackend, conv: str, a: ListMemoriesArgs) -> BaseModel:
    return await b.list(
        conv,
        scope=a.scope,
        cursor=a.cursor,
        limit=a.limit,
        tier=a.tier,
        entity=a.entity,
        include_invalidated=a.include_invalidated,
    )


async def _update(b: MemoryBackend, conv: str, a: UpdateMemoryArgs) -> BaseModel:
    return await b.update(conv, str(a.memory_id), a.to_patch())


async def _delete(b: MemoryBackend, conv: str, a: DeleteMemoryArgs) -> BaseModel:
    return await b.forget(conv, str(a.memory_id))


async def _purge(b: MemoryBackend, conv: str, a: DeleteAllArgs) -> BaseModel:
    return await b.purge(conv, a.scope)


async def _history(b: MemoryBackend, conv: str, a: MemoryIdArgs) -> BaseModel:
    return await b.history(conv, str(a.memory_id), a.scope)


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "add_memory",
        "Remember",
        "Remember what was said: pass `messages` (role, content, optional speaker and "
        "ISO 8601 timestamp) or plain `text`. Facts are extracted and dated; a new fact about "
        "the same thing supersedes the old one. Returns the memories added and invalidated.",
        AddMemoryArgs,
        _add,
    ),
    ToolSpec(
        "search_memories",
        "Recall",
        "Recall what is known about `query`. Returns `context` (a dated, token-budgeted text "
        "to put in front of the model) and `hits` (memories with ids and scores). Use "
        "`as_of` to ask how things stood at a past time, `scope: agent` to search every "
        "conversation.",
        SearchMemoriesArgs,
        _search,
        read_only=True,
    ),
    ToolSpec(
        "get_memory",
        "Read a memory",
        "Read one memory by id, at its latest version (valid or not).",
        MemoryIdArgs,
        _get,
        read_only=True,
    ),
    ToolSpec(
        "list_memories",
        "List memories",
        "List current memories oldest first, one page at a time (pass `next_cursor` back as "
        "`cursor`); filter by tier or entity.",
        ListMemoriesArgs,
        _list,
        read_only=True,
    ),
    ToolSpec(
        "update_memory",
        "Edit a memory",
        "Correct a memory: new `content` makes a new version (the old one stays in its "
        "history); a new `tier` changes how long it lives.",
        UpdateMemoryArgs,
        _update,
    ),
    ToolSpec(
        "delete_memory",
        "Forget a memory",
        "Forget one memory: it is no longer recalled, its history is kept. To erase "
        "everything, use delete_all_memories.",
        DeleteMemoryArgs,
        _delete,
        destructive=True,
    ),
    ToolSpec(
        "delete_all_memories",
        "Erase memory",
        "Erase the conversation's memory (or, with `scope: agent`, all of the agent's) from "
        "every store, irreversibly. Returns the purge receipt: rows deleted per store.",
        DeleteAllArgs,
        _purge,
        destructive=True,
    ),
    ToolSpec(
        "memory_history",
        "Memory history",
        "Every version of a memory and every event that touched it (added, updated, "
        "reinforced, invalidated …).",
        MemoryIdArgs,
        _history,
        read_only=True,
    ),
)
BY_NAME = {spec.name: spec for spec in TOOLS}


def list_tools() -> list[types.Tool]:
    return [spec.tool() for spec in TOOLS]


def error_result(error: NmafcError) -> types.CallToolResult:
    """An NMAFC error as an MCP tool error the model can act on."""
    body = {"error": {"code": error.code, "detail": error.detail, "fix": error.fix}}
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(body))],
        structured_content=body,
        is_error=True,
    )


def _invalid_arguments(name: str, exc: ValidationError) -> InvalidInput:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "arguments"
    return InvalidInput(
        f"{name}: `{where}`: {first['msg']}.",
        fix=f"Call {name} with arguments matching its input schema (see tools/list).",
    )


async def call_tool(
    backend: MemoryBackend,
    name: str,
    arguments: dict[str, Any] | None,
    default_conversation: str = DEFAULT_CONVERSATION,
) -> types.CallToolResult:
    """Run tool ``name`` for ``backend``'s agent; every NMAFC error becomes a tool error."""
    spec = BY_NAME.get(name)
    if spec is None:
        known = ", ".join(BY_NAME)
        return error_result(InvalidInput(f"No tool {name!r}.", fix=f"Call one of: {known}."))
    try:
        try:
            args = spec.args.model_validate(arguments or {})
            conversation = getattr(args, "conversation_id", None) or default_conversation
            result = await spec.handler(backend, conversation, args)
        except ValidationError as exc:  # the tool's own models, or the REST models behind
            raise _invalid_arguments(name, exc) from exc
    except NmafcError as exc:
        return error_result(exc)
    payload = result.model_dump(mode="json")
    return types.CallToolResult(
        content=[types.TextContent(text=json.dumps(payload, ensure_ascii=False))],
        structured_content=payload,
    )

"""One agent's memory, as the other doors (MCP, Mem0, LangGraph) reach it.

A :class:`MemoryBackend` is bound to ONE agent, decided by the caller's key before it is
built; every method takes the conversation, so a door can never name another agent.
Two implementations answer the same calls with the REST API's response models:

- :class:`EngineBackend` calls the engine's public methods in this process, exactly as the
  ``/v1/memories`` routes do (``/mcp`` and the Mem0 routes, and ``nmafc mcp`` embedded);
- :class:`ClientBackend` sends them to a running service with the HTTP client
  (``nmafc mcp --url``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol

from anyio.to_thread import run_sync

from nmafc.api import converters
from nmafc.core.scope import AgentScope, AnyScope, Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions, RecallResult
from nmafc.settings import Settings
from nmafc.wire import (
    AddResult,
    FactIn,
    Memory,
    MemoryHistory,
    MemoryPage,
    MessageIn,
    PatchMemory,
    PurgeReceiptOut,
    Reach,
    SearchRequest,
    SearchResult,
    TierName,
)

if TYPE_CHECKING:  # the client imports the API's schemas, whose package imports this
    from nmafc.client import AsyncClient

# Where searches run: the service's bounded recall threads, else anyio's worker threads.
RecallRunner = Callable[[Callable[[], RecallResult]], Awaitable[RecallResult]]


class MemoryBackend(Protocol):
    """One agent's memory: the operations every door offers, per conversation."""

    agent_id: str

    async def add(self, conversation: str, messages: list[MessageIn]) -> AddResult: ...

    async def search(self, conversation: str, request: SearchRequest) -> SearchResult: ...

    async def get(self, conversation: str, memory_id: str, scope: Reach) -> Memory: ...

    async def list(
        self,
        conversation: str,
        *,
        scope: Reach = "conversation",
        cursor: str | None = None,
        limit: int = 50,
        tier: TierName | None = None,
        entity: str | None = None,
        include_invalidated: bool = False,
    ) -> MemoryPage: ...

    async def update(self, conversation: str, memory_id: str, patch: PatchMemory) -> Memory: ...

    async def forget(self, conversation: str, memory_id: str) -> Memory: ...

    async def purge(self, conversation: str, scope: Reach) -> PurgeReceiptOut: ...

    async def history(self, conversation: str, memory_id: str, scope: Reach) -> MemoryHistory: ...


class EngineBackend:
    """The engine in this process, called as the REST routes call it."""

    def __init__(
        self,
        engine: MemoryEngine,
        settings: Settings,
        agent_id: str,
        *,
        recall_runner: RecallRunner | None = None,
    ) -> None:
        self.engine = engine
        self.settings = settings
        self.agent_id = agent_id
        self._recall_runner = recall_runner

    def _reach(self, conversation: str, scope: Reach) -> AnyScope:
        return AgentScope(self.agent_id) if scope == "agent" else Scope(self.agent_id, conversation)

    async def add(self, conversation: str, messages: list[MessageIn]) -> AddResult:
        """Remember messages (facts are extracted), as ``POST /v1/memories``."""
        scope = Scope(self.agent_id, conversation)
        turns = [m.to_message() for m in messages]
        return converters.add_result(await run_sync(self.engine.remember, scope, turns))

    async def ingest(self, conversation: str, facts: list[FactIn]) -> AddResult:
        """Store explicit facts as given (no extraction), as ``POST /v1/memories``."""
        scope = Scope(self.agent_id, conversation)
        drafts = [f.to_draft() for f in facts]
        return converters.add_result(await run_sync(self.engine.ingest, scope, drafts))

    async def search(self, conversation: str, request: SearchRequest) -> SearchResult:
        """Recall, as ``POST /v1/memories/search`` (on the service's recall threads)."""
        retrieval = self.settings.retrieval
        options = RecallOptions(
            budget_tokens=request.budget_tokens or retrieval.budget_tokens,
            as_of=request.as_of if isinstance(request.as_of, float) else None,
            as_of_time=None if isinstance(request.as_of, float) else request.as_of,
            include_invalidated=request.include_invalidated,
            include_archived=request.include_archived,
            reinforce=request.reinforce,
            top_k=request.top_k or retrieval.top_k,
        )
        reach = self._reach(conversation, request.scope)
        call = partial(self.engine.recall, reach, request.query, options)
        if self._recall_runner is not None:
            result = await self._recall_runner(call)
        else:
            result = await run_sync(call)
        return converters.search_result(result)

    async def get(self, conversation: str, memory_id: str, scope: Reach) -> Memory:
        reach = self._reach(conversation, scope)
        return Memory.of(await run_sync(self.engine.get, reach, memory_id))

    async def list(
        self,
        conversation: str,
        *,
        scope: Reach = "conversation",
        cursor: str | None = None,
        limit: int = 50,
        tier: TierName | None = None,
        entity: str | None = None,
        include_invalidated: bool = False,
    ) -> MemoryPage:
        call = partial(
            self.engine.page,
            self._reach(conversation, scope),
            after=int(cursor or 0),
            limit=limit,
            tier=tier,
            entity=entity,
            include_invalidated=include_invalidated,
        )
        return converters.memory_page(await run_sync(call))

    async def update(self, conversation: str, memory_id: str, patch: PatchMemory) -> Memory:
        call = partial(
            self.engine.update,
            Scope(self.agent_id, conversation),
            memory_id,
            content=patch.content,
            tier=patch.tier,
            expected_version=patch.expected_version,
        )
        return Memory.of(await run_sync(call))

    async def forget(self, conversation: str, memory_id: str) -> Memory:
        scope = Scope(self.agent_id, conversation)
        return Memory.of(await run_sync(self.engine.forget, scope, memory_id))

    async def purge(self, conversation: str, scope: Reach) -> PurgeReceiptOut:
        reach = self._reach(conversation, scope)
        return converters.purge_receipt_out(await run_sync(self.engine.purge, reach))

    async def history(self, conversation: str, memory_id: str, scope: Reach) -> MemoryHistory:
        reach = self._reach(conversation, scope)
        return converters.memory_history(await run_sync(self.engine.history, reach, memory_id))


class ClientBackend:
    """A running service, through the HTTP client; its key decides the agent."""

    def __init__(self, client: AsyncClient, agent_id: str) -> None:
        self.client = client
        self.agent_id = agent_id

    def _at(self, conversation: str) -> AsyncClient:
        return self.client.scoped(conversation_id=conversation)

    async def add(self, conversation: str, messages: list[MessageIn]) -> AddResult:
        payload = [m.model_dump(mode="json", exclude_none=True) for m in messages]
        return await self._at(conversation).add(messages=payload)

    async def search(self, conversation: str, request: SearchRequest) -> SearchResult:
        options = request.model_dump(mode="json", exclude_none=True, exclude={"query"})
        return await self._at(conversation).search(request.query, **options)

    async def get(self, conversation: str, memory_id: str, scope: Reach) -> Memory:
        return await self._at(conversation).get(memory_id, scope=scope)

    async def list(
        self,
        conversation: str,
        *,
        scope: Reach = "conversation",
        cursor: str | None = None,
        limit: int = 50,
        tier: TierName | None = None,
        entity: str | None = None,
        include_invalidated: bool = False,
    ) -> MemoryPage:
        return await self._at(conversation).list(
            scope=scope,
            cursor=cursor,
            limit=limit,
            tier=tier,
            entity=entity,
            include_invalidated=include_invalidated or None,
        )

    async def update(self, conversation: str, memory_id: str, patch: PatchMemory) -> Memory:
        return await self._at(conversation).update(
            memory_id,
            content=patch.content,
            tier=patch.tier,
            expected_version=patch.expected_version,
        )

    async def forget(self, conversation: str, memory_id: str) -> Memory:
        return await self._at(conversation).forget(memory_id)

    async def purge(self, conversation: str, scope: Reach) -> PurgeReceiptOut:
        return await self._at(conversation).purge(scope=scope)

    async def history(self, conversation: str, memory_id: str, scope: Reach) -> MemoryHistory:
        return await self._at(conversation).history(memory_id, scope=scope)

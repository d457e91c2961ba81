"""The library API: ``SyncMemory`` (blocking) and ``Memory`` (asyncio), bound to one scope.

::

    from nmafc import SyncMemory

    with SyncMemory(agent_id="support-bot", conversation_id="alice") as memory:
        memory.remember([{"role": "user", "content": "I'm allergic to shellfish."}])
        print(memory.recall("what can't I eat?").context)

Both share one :class:`~nmafc.engine.engine.MemoryEngine` per instance; ``.scope(...)``
returns a view on another conversation that shares it. Safe across threads and tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio.to_thread

from nmafc.core.events import Event
from nmafc.core.facts import FactDraft
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import AgentScope, AnyScope, Scope
from nmafc.core.tiers import Tier, parse_tier
from nmafc.core.turns import Message, dated
from nmafc.engine.engine import MemoryEngine, Stats
from nmafc.engine.history import PurgeReceipt, RecordHistory, RollbackResult
from nmafc.engine.maintenance import MaintenanceReport
from nmafc.engine.recall import RecallOptions, RecallResult
from nmafc.engine.writes import WriteResult
from nmafc.errors import InvalidInput
from nmafc.settings import Settings, load_settings

MessageLike = Message | str | Mapping[str, Any]
FactLike = FactDraft | str | Mapping[str, Any]
T = TypeVar("T")


def to_message(item: MessageLike, occurred_at: datetime | None = None) -> Message:
    """Accept a :class:`Message`, a plain string (a user message) or an OpenAI-style dict."""
    if isinstance(item, Message):
        return item if item.occurred_at or occurred_at is None else _with_time(item, occurred_at)
    if isinstance(item, str):
        return Message(content=item, occurred_at=occurred_at)
    if not isinstance(item, Mapping):
        raise InvalidInput(
            f"Cannot read a message from {type(item).__name__}.",
            fix="Send {'role': ..., 'content': ...} objects.",
        )
    when = item.get("occurred_at") or item.get("timestamp")
    unreadable = InvalidInput(
        f"Unreadable timestamp {when!r}.",
        fix="Use a datetime or ISO 8601 text, e.g. 2023-05-08T13:56:00Z.",
    )
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when)
        except ValueError as exc:
            raise unreadable from exc
    elif when is not None and not isinstance(when, datetime):
        raise unreadable  # a number would be stored as is and fail deep in the store
    captions = item.get("captions") or ([item["blip_caption"]] if item.get("blip_caption") else [])
    content = item.get("content")
    if not isinstance(content, str):
        raise InvalidInput("A message has no text `content`.", fix="Set `content` to a string.")
    return Message(
        content=content,
        role=str(item.get("role") or "user"),
        speaker=item.get("speaker") or item.get("name"),
        occurred_at=when or occurred_at,
        captions=tuple(str(c) for c in captions),
    )


def to_fact(item: FactLike) -> FactDraft:
    """Accept a :class:`FactDraft`, a plain string, or a dict with at least ``content``."""
    if isinstance(item, FactDraft):
        return item
    if isinstance(item, str):
        return FactDraft(content=item, entity=item)
    if not isinstance(item, Mapping) or not isinstance(item.get("content"), str):
        raise InvalidInput("A fact has no text `content`.", fix="Send {'content': '...'}.")
    content = item["content"]
    return FactDraft(
        content=content,
        entity=str(item.get("entity") or content),
        tier=parse_tier(item.get("tier") or Tier.ACTIVE_CONTEXT),
        importance=float(item.get("importance", 0.5)),
        related_entities=tuple(item.get("related_entities") or ()),
        overrides_entity=item.get("overrides_entity"),
        vector=item.get("vector"),
    )


def _with_time(message: Message, when: datetime) -> Message:
    return Message(message.content, message.role, message.speaker, when, message.captions)


class SyncMemory:
    """Blocking memory for one ``(agent_id, conversation_id)``."""

    def __init__(
        self,
        agent_id: str = "default",
        conversation_id: str = "default",
        *,
        settings: Settings | None = None,
        engine: MemoryEngine | None = None,
        config_file: str | Path | None = None,
    ) -> None:
        self._scope = Scope(agent_id, conversation_id)
        self._owns_engine = engine is None
        self.engine = engine or MemoryEngine.open(settings or load_settings(config_file))

    @property
    def scope_id(self) -> Scope:
        return self._scope

    def scope(self, conversation_id: str | None = None, agent_id: str | None = None) -> SyncMemory:
        """A view on another conversation (or agent) sharing this engine."""
        return SyncMemory(
            agent_id or self._scope.agent_id,
            conversation_id or self._scope.conversation_id,
            engine=self.engine,
        )

    def __enter__(self) -> SyncMemory:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the engine if this object opened it (views leave it to their parent)."""
        if self._owns_engine:
            self.engine.close()

    def remember(
        self, messages: Iterable[MessageLike] | MessageLike, occurred_at: datetime | None = None
    ) -> WriteResult:
        """Store messages as turns and the facts they contain.

        A message without a time takes the time of the message before it in this call;
        those before any dated message take ``occurred_at`` (default: now).
        """
        items = [messages] if isinstance(messages, str | Mapping | Message) else list(messages)
        # An undated message takes the time of the one before it, else ``occurred_at``.
        stamped = dated([to_message(m) for m in items], occurred_at)
        result = self.engine.remember(self._scope, stamped)
        if self.engine.settings.consolidation.inline and self.engine.maintenance_due(self._scope):
            self.engine.maintain(self._scope)
        return result

    def ingest(self, facts: Iterable[FactLike] | FactLike) -> WriteResult:
        """Store explicit facts without turns."""
        items = [facts] if isinstance(facts, str | Mapping | FactDraft) else list(facts)
        return self.engine.ingest(self._scope, [to_fact(f) for f in items])

    def recall(
        self,
        query: str,
        *,
        budget_tokens: int | None = None,
        as_of: float | datetime | None = None,
        include_invalidated: bool = False,
        include_archived: bool = False,
        reinforce: bool = True,
        top_k: int | None = None,
        scope: Literal["conversation", "agent"] = "conversation",
        preset: str | None = None,
    ) -> RecallResult:
        """A budgeted context for ``query``; recalled facts are reinforced unless told not to."""
        target: AnyScope = (
            self._scope if scope == "conversation" else AgentScope(self._scope.agent_id)
        )
        options = RecallOptions(
            budget_tokens=budget_tokens or self.engine.settings.retrieval.budget_tokens,
            as_of=None if isinstance(as_of, datetime) else as_of,
            as_of_time=as_of if isinstance(as_of, datetime) else None,
            include_invalidated=include_invalidated,
            include_archived=include_archived,
            reinforce=reinforce,
            top_k=top_k or self.engine.settings.retrieval.top_k,
        )
        return self.engine.recall(target, query, options, preset_name=preset)

    def get(self, record_id: str) -> MemoryRecord:
        return self.engine.get(self._scope, record_id)

    def update(
        self, record_id: str, *, content: str | None = None, tier: str | None = None
    ) -> MemoryRecord:
        return self.engine.update(self._scope, record_id, content=content, tier=tier)

    def forget(self, record_id: str) -> MemoryRecord:
        """Invalidate one memory (kept in history; ``purge`` erases)."""
        return self.engine.forget(self._scope, record_id)

    def purge(self, *, whole_agent: bool = False) -> PurgeReceipt:
        """Erase this conversation (or every conversation of the agent) from both stores."""
        target: AnyScope = AgentScope(self._scope.agent_id) if whole_agent else self._scope
        return self.engine.purge(target)

    def rollback(self, to_turn: float) -> RollbackResult:
        return self.engine.rollback(self._scope, to_turn)

    def history(self, record_id: str) -> RecordHistory:
        return self.engine.history(self._scope, record_id)

    def events(self, *, after_id: int = 0, limit: int = 100) -> list[Event]:
        return self.engine.events(self._scope, after_id=after_id, limit=limit)

    def stats(self) -> Stats:
        return self.engine.stats(self._scope)

    def maintain(self) -> MaintenanceReport:
        """Run prune + consolidation now."""
        return self.engine.maintain(self._scope)

    def export_snapshot(self, path: str | Path) -> dict[str, int]:
        return self.engine.export_snapshot(self._scope, Path(path))

    def import_snapshot(self, path: str | Path) -> dict[str, int]:
        return self.engine.import_snapshot(self._scope, Path(path))


class Memory:
    """The asyncio face of :class:`SyncMemory`: every call runs in a worker thread."""

    def __init__(
        self,
        agent_id: str = "default",
        conversation_id: str = "default",
        *,
        settings: Settings | None = None,
        engine: MemoryEngine | None = None,
        config_file: str | Path | None = None,
        _sync: SyncMemory | None = None,
    ) -> None:
        self._sync = _sync or SyncMemory(
            agent_id, conversation_id, settings=settings, engine=engine, config_file=config_file
        )

    @property
    def engine(self) -> MemoryEngine:
        return self._sync.engine

    def scope(self, conversation_id: str | None = None, agent_id: str | None = None) -> Memory:
        return Memory(_sync=self._sync.scope(conversation_id, agent_id))

    async def __aenter__(self) -> Memory:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await _run(self._sync.close)

    async def remember(
        self, messages: Iterable[MessageLike] | MessageLike, occurred_at: datetime | None = None
    ) -> WriteResult:
        return await _run(self._sync.remember, messages, occurred_at)

    async def ingest(self, facts: Iterable[FactLike] | FactLike) -> WriteResult:
        return await _run(self._sync.ingest, facts)

    async def recall(self, query: str, **options: Any) -> RecallResult:
        return await _run(partial(self._sync.recall, query, **options))

    async def get(self, record_id: str) -> MemoryRecord:
        return await _run(self._sync.get, record_id)

    async def update(
        self, record_id: str, *, content: str | None = None, tier: str | None = None
    ) -> MemoryRecord:
        return await _run(partial(self._sync.update, record_id, content=content, tier=tier))

    async def forget(self, record_id: str) -> MemoryRecord:
        return await _run(self._sync.forget, record_id)

    async def purge(self, *, whole_agent: bool = False) -> PurgeReceipt:
        return await _run(partial(self._sync.purge, whole_agent=whole_agent))

    async def rollback(self, to_turn: float) -> RollbackResult:
        return await _run(self._sync.rollback, to_turn)

    async def history(self, record_id: str) -> RecordHistory:
        return await _run(self._sync.history, record_id)

    async def events(self, *, after_id: int = 0, limit: int = 100) -> list[Event]:
        return await _run(partial(self._sync.events, after_id=after_id, limit=limit))

    async def stats(self) -> Stats:
        return await _run(self._sync.stats)

    async def maintain(self) -> MaintenanceReport:
        return await _run(self._sync.maintain)

    async def export_snapshot(self, path: str | Path) -> dict[str, int]:
        return await _run(self._sync.export_snapshot, path)

    async def import_snapshot(self, path: str | Path) -> dict[str, int]:
        return await _run(self._sync.import_snapshot, path)


async def _run(func: Callable[..., T], *args: Any) -> T:
    return await anyio.to_thread.run_sync(func, *args)

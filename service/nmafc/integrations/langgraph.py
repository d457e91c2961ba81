"""A LangGraph ``BaseStore`` over a running NMAFC service (``pip install 'nmafc[langgraph]'``).

::

    from langgraph.graph import StateGraph
    from nmafc.integrations.langgraph import NmafcStore

    store = NmafcStore("http://127.0.0.1:8000", api_key="…")
    graph = StateGraph(State).add_node(...).compile(store=store)

How LangGraph's model maps onto NMAFC's:

- **Namespace → conversation.** ``("users", "alice", "memories")`` is the conversation
  ``lg.users.alice.memories`` of the key's agent (LangGraph labels hold no ``.``; any
  character outside ``[A-Za-z0-9_:-]`` is written ``@XX``, its UTF-8 bytes in hex). The key
  decides the agent, as on every NMAFC door.
- **Item → one explicit fact.** Its content is the JSON ``{"key": …, "value": …}``, stored
  verbatim (no extraction), so a ``get`` returns the dict exactly as it was put (any JSON
  value, nested or not), and a search by meaning embeds that JSON text. Its entity is
  ``lg_`` + a SHA-256 prefix of the key; a ``put`` to an existing key supersedes the old
  fact (NMAFC keeps the old version in the memory's history, where LangGraph's stores
  overwrite), and ``put(…, None)`` or ``delete`` forgets it.
- **Search.** With ``query``: NMAFC recall (hybrid, ranked; scores are NMAFC's fused
  scores, not cosine similarities) over each namespace under the prefix, without
  reinforcing what it returns; without: the items in insertion order. ``filter`` is
  equality on top-level value fields, applied to what comes back.
- Items are stored in the ``CoreAnchor`` tier (never pruned by decay). ``index`` and
  ``ttl`` settings are not supported (NMAFC embeds with its own pinned model): passing
  ``index=`` or a ``ttl`` raises.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from nmafc.client import AsyncClient, Client
from nmafc.errors import MemoryNotFound, UnsupportedParameter
from nmafc.wire import Memory

PREFIX = "lg."
_KEEP = re.compile(r"[A-Za-z0-9_:-]")
_ESCAPE = re.compile(r"@([0-9A-F]{2})")


def conversation_of(namespace: tuple[str, ...]) -> str:
    """The NMAFC conversation that holds ``namespace``."""
    return PREFIX + ".".join(_escape(label) for label in namespace)


def namespace_of(conversation: str) -> tuple[str, ...] | None:
    """The namespace a conversation holds (None: not one of this store's)."""
    if not conversation.startswith(PREFIX):
        return None
    return tuple(_unescape(label) for label in conversation[len(PREFIX) :].split("."))


def _escape(label: str) -> str:
    return "".join(c if _KEEP.match(c) else "".join(f"@{b:02X}" for b in c.encode()) for c in label)


def _unescape(label: str) -> str:
    out, i = bytearray(), 0
    while i < len(label):
        if _ESCAPE.match(label, i):
            out += bytes.fromhex(label[i + 1 : i + 3])
            i += 3
        else:
            out += label[i].encode()
            i += 1
    return out.decode()


def entity_of(key: str) -> str:
    """The fact's entity: a digest, since NMAFC entities are short lowercase slugs."""
    return "lg_" + hashlib.sha256(key.encode()).hexdigest()[:32]


def _fields(memory: Memory, namespace: tuple[str, ...]) -> dict[str, Any]:
    envelope = json.loads(memory.content)
    return {
        "namespace": namespace,
        "key": envelope["key"],
        "value": envelope["value"],
        "created_at": memory.valid_at_time,
        "updated_at": memory.created_at,
    }


def _item(memory: Memory, namespace: tuple[str, ...]) -> Item:
    return Item(**_fields(memory, namespace))


def _found(memory: Memory, namespace: tuple[str, ...], score: float | None) -> SearchItem:
    return SearchItem(**_fields(memory, namespace), score=score)


def _fact(key: str, value: Mapping[str, Any]) -> dict[str, Any]:
    content = json.dumps({"key": key, "value": dict(value)}, ensure_ascii=False, sort_keys=True)
    entity = entity_of(key)
    return {"content": content, "entity": entity, "tier": "CoreAnchor", "overrides_entity": entity}


def _matches(value: dict[str, Any], wanted: dict[str, Any] | None) -> bool:
    return not wanted or all(value.get(k) == v for k, v in wanted.items())


def _refuse_ttl(op: PutOp | GetOp | SearchOp) -> None:
    if isinstance(op, PutOp) and op.ttl is not None:
        raise UnsupportedParameter(
            "NmafcStore does not expire items (`ttl`).",
            fix="Put without ttl; delete items that should go.",
        )
    if isinstance(op, PutOp) and op.index not in (None, False) and op.index != []:
        raise UnsupportedParameter(
            "NmafcStore embeds every item with NMAFC's own model (`index`).",
            fix="Put without index=.",
        )


class NmafcStore(BaseStore):
    """LangGraph's store interface over NMAFC (sync and async), one agent per key."""

    supports_ttl = False

    def __init__(
        self,
        url: str = "http://127.0.0.1:8000",
        *,
        api_key: str | None = None,
        agent_id: str | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.url, self.api_key, self.agent_id = url, api_key, agent_id
        self._client = Client(url, api_key=api_key, agent_id=agent_id, timeout=timeout)
        self._timeout = timeout

    def _aclient(self) -> AsyncClient:
        # An AsyncClient is bound to the event loop it first runs on: one per call batch.
        return AsyncClient(
            self.url, api_key=self.api_key, agent_id=self.agent_id, timeout=self._timeout
        )

    def close(self) -> None:
        self._client.close()

    # -- the blocking path --------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run each operation in order against the service."""
        return [self._run(op) for op in ops]

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, PutOp):
            _refuse_ttl(op)
            self._put(op.namespace, op.key, op.value)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise TypeError(f"Unknown store operation {type(op).__name__}")

    def _current(self, namespace: tuple[str, ...], key: str) -> Memory | None:
        at = self._client.scoped(conversation_id=conversation_of(namespace))
        page = at.list(entity=entity_of(key), limit=10)
        found = [m for m in page.items if m.valid and json.loads(m.content)["key"] == key]
        return found[-1] if found else None

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        memory = self._current(namespace, key)
        return _item(memory, namespace) if memory is not None else None

    def _put(self, namespace: tuple[str, ...], key: str, value: Mapping[str, Any] | None) -> None:
        at = self._client.scoped(conversation_id=conversation_of(namespace))
        if value is None:
            memory = self._current(namespace, key)
            if memory is not None:
                try:
                    at.forget(memory.id)
                except MemoryNotFound:
                    pass  # already gone: delete is idempotent, as LangGraph's stores are
            return
        at.add(facts=[_fact(key, value)])

    def _search(self, op: SearchOp) -> list[SearchItem]:
        found: list[SearchItem] = []
        for namespace in self._under(op.namespace_prefix):
            at = self._client.scoped(conversation_id=conversation_of(namespace))
            if op.query:
                top = min(100, op.limit + op.offset)
                result = at.search(op.query, top_k=top, reinforce=False)
                hits: list[tuple[Memory, float | None]] = [
                    (h.memory, h.score) for h in result.hits if h.memory
                ]
            else:
                hits = [(m, None) for m in at.iter_memories()]
            for memory, score in hits:
                item = _found(memory, namespace, score)
                if _matches(item.value, op.filter):
                    found.append(item)
        if op.query:
            found.sort(key=lambda i: -(i.score or 0.0))
        return found[op.offset : op.offset + op.limit]

    def _under(self, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        return [ns for ns in self._all_namespaces() if ns[: len(prefix)] == prefix]

    def _all_namespaces(self) -> list[tuple[str, ...]]:
        scopes = self._client.scopes()
        return _namespaces_in(scopes.agents, scopes.bound_agent or self.agent_id)

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        return _filter_namespaces(self._all_namespaces(), op)

    # -- the asyncio path ---------------------------------------------------------------

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run each operation in order against the service, without blocking the loop."""
        async with self._aclient() as client:
            return [await self._arun(client, op) for op in ops]

    async def _arun(self, client: AsyncClient, op: Op) -> Result:
        if isinstance(op, GetOp):
            memory = await self._acurrent(client, op.namespace, op.key)
            return _item(memory, op.namespace) if memory is not None else None
        if isinstance(op, PutOp):
            _refuse_ttl(op)
            at = client.scoped(conversation_id=conversation_of(op.namespace))
            if op.value is None:
                memory = await self._acurrent(client, op.namespace, op.key)
                if memory is not None:
                    try:
                        await at.forget(memory.id)
                    except MemoryNotFound:
                        pass
            else:
                await at.add(facts=[_fact(op.key, op.value)])
            return None
        if isinstance(op, SearchOp):
            return await self._asearch(client, op)
        if isinstance(op, ListNamespacesOp):
            scopes = await client.scopes()
            spaces = _namespaces_in(scopes.agents, scopes.bound_agent or self.agent_id)
            return _filter_namespaces(spaces, op)
        raise TypeError(f"Unknown store operation {type(op).__name__}")

    async def _acurrent(
        self, client: AsyncClient, namespace: tuple[str, ...], key: str
    ) -> Memory | None:
        at = client.scoped(conversation_id=conversation_of(namespace))
        page = await at.list(entity=entity_of(key), limit=10)
        found = [m for m in page.items if m.valid and json.loads(m.content)["key"] == key]
        return found[-1] if found else None

    async def _asearch(self, client: AsyncClient, op: SearchOp) -> list[SearchItem]:
        scopes = await client.scopes()
        spaces = _namespaces_in(scopes.agents, scopes.bound_agent or self.agent_id)
        found: list[SearchItem] = []
        for namespace in [
            ns for ns in spaces if ns[: len(op.namespace_prefix)] == op.namespace_prefix
        ]:
            at = client.scoped(conversation_id=conversation_of(namespace))
            if op.query:
                result = await at.search(
                    op.query, top_k=min(100, op.limit + op.offset), reinforce=False
                )
                hits: list[tuple[Memory, float | None]] = [
                    (h.memory, h.score) for h in result.hits if h.memory
                ]
            else:
                hits = [(m, None) async for m in at.iter_memories()]
            for memory, score in hits:
                item = _found(memory, namespace, score)
                if _matches(item.value, op.filter):
                    found.append(item)
        if op.query:
            found.sort(key=lambda i: -(i.score or 0.0))
        return found[op.offset : op.offset + op.limit]


def _namespaces_in(agents: list[Any], agent_id: str | None) -> list[tuple[str, ...]]:
    spaces = []
    for agent in agents:
        if agent_id is not None and agent.agent_id != agent_id:
            continue
        for conversation in agent.conversations:
            namespace = namespace_of(conversation.conversation_id)
            if namespace is not None:
                spaces.append(namespace)
    return sorted(set(spaces))


def _filter_namespaces(
    spaces: list[tuple[str, ...]], op: ListNamespacesOp
) -> list[tuple[str, ...]]:
    for condition in op.match_conditions or ():
        path = condition.path
        if condition.match_type == "prefix":
            spaces = [s for s in spaces if _like(s[: len(path)], path)]
        else:
            spaces = [s for s in spaces if len(s) >= len(path) and _like(s[-len(path) :], path)]
    if op.max_depth is not None:
        spaces = sorted({s[: op.max_depth] for s in spaces})
    return spaces[op.offset : op.offset + op.limit]


def _like(labels: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    return len(labels) == len(pattern) and all(
        p in ("*", x) for x, p in zip(labels, pattern, strict=True)
    )

"""The arms under test: the NMAFC engine and baselines that read the raw dialogue.

The session-document baseline (``sessions``) lives in session_arm.py.

Every arm gets the same embedder instance, the same token counter and the same budget;
the baselines pack their ranked items with the engine renderer's policy (in rank order,
skipping an item that would overflow and trying the next).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from nmafc.core.rendering import format_date
from nmafc.core.scope import Scope
from nmafc.core.turns import Message
from nmafc.embedding.base import Embedder
from nmafc.embedding.tokens import TokenCounter
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.evaluation.bm25 import BM25, terms
from nmafc.evaluation.loaders import Conversation, DialogTurn, Session
from nmafc.evaluation.metrics import dedupe
from nmafc.settings import Settings, load_settings
from nmafc.wire.requests import MAX_MESSAGES_PER_REQUEST

ARM_NAMES = ("nmafc", "rag", "bm25", "sessions")  # all of them run unless --arms says
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9._:@-]")


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What an arm returned for one question at one budget."""

    context: str
    turn_ids: list[str]  # dataset turn ids whose text (or facts from it) the context carries
    tokens: int
    ranked_turns: list[str]  # the arm's full ranking as turn ids, for rank metrics


class Arm(Protocol):
    """Ingest a conversation once, then answer retrievals from it."""

    name: str

    def prepare(self, conversation_id: str) -> None:
        """Set up storage for a conversation (not timed: a service does it once)."""
        ...

    def ingest(self, conversation: Conversation) -> None:
        """Index every turn of ``conversation``."""
        ...

    def retrieve(self, conversation_id: str, question: str, budget: int) -> Retrieval:
        """A context within ``budget`` tokens for ``question``."""
        ...

    def describe(self) -> dict[str, Any]:
        """The arm's settings, for summary.json."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...


def turn_line(session: Session, turn: DialogTurn, dated: bool = True) -> str:
    """``[8 May 2023] Caroline: text [shared an image: …]``."""
    body = f"{turn.speaker}: {turn.full_text()}"
    return f"[{format_date(session.occurred_at)}] {body}" if dated else body


def pack(order: Sequence[int], costs: Sequence[int], budget: int) -> list[int]:
    """Indexes taken in ``order`` while they fit; one that would overflow is skipped."""
    chosen: list[int] = []
    used = 0
    for index in order:
        if used + costs[index] <= budget:
            chosen.append(index)
            used += costs[index]
        if used >= budget:
            break
    return chosen


@dataclass(slots=True)
class _Items:
    """A conversation's retrievable units: rendered text, the turns inside, token cost."""

    texts: list[str]
    turns: list[tuple[str, ...]]
    costs: list[int]

    def retrieval(self, order: Sequence[int], budget: int, counter: TokenCounter) -> Retrieval:
        chosen = pack(order, self.costs, budget)
        # Blank-line separators add no WordPiece tokens, so the count equals the sum of costs.
        context = "\n\n".join(self.texts[i] for i in chosen)
        return Retrieval(
            context=context,
            turn_ids=dedupe(t for i in chosen for t in self.turns[i]),
            tokens=counter.count(context),
            ranked_turns=dedupe(t for i in order for t in self.turns[i]),
        )


class RagArm:
    """Overlapping windows of raw turns, ranked by cosine to the question."""

    name = "rag"

    def __init__(
        self, embedder: Embedder, counter: TokenCounter, *, window: int = 4, stride: int = 2
    ) -> None:
        if window < 1 or stride < 1:
            raise ValueError("window and stride must be positive")
        self.embedder = embedder
        self.counter = counter
        self.window = window
        self.stride = stride
        self._items: dict[str, _Items] = {}
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}

    def windows(self, session: Session) -> list[tuple[DialogTurn, ...]]:
        """Windows of ``window`` turns every ``stride`` turns, the last one reaching the end."""
        turns = session.turns
        out: list[tuple[DialogTurn, ...]] = []
        for start in range(0, len(turns), self.stride):
            out.append(turns[start : start + self.window])
            if start + self.window >= len(turns):
                break
        return out

    def prepare(self, conversation_id: str) -> None:
        pass

    def ingest(self, conversation: Conversation) -> None:
        texts: list[str] = []
        ids: list[tuple[str, ...]] = []
        for session in conversation.sessions:
            for chunk in self.windows(session):
                lines = [turn_line(session, t, dated=False) for t in chunk]
                texts.append(f"[{format_date(session.occurred_at)}] " + "\n".join(lines))
                ids.append(tuple(t.id for t in chunk))
        self._items[conversation.id] = _Items(texts, ids, self.counter.count_many(texts))
        self._vectors[conversation.id] = self.embedder.embed(texts)

    def retrieve(self, conversation_id: str, question: str, budget: int) -> Retrieval:
        items = self._items[conversation_id]
        vectors = self._vectors[conversation_id]
        if not items.texts:
            return Retrieval("", [], 0, [])
        scores = vectors @ np.asarray(self.embedder.embed([question])[0], dtype=np.float32)
        order = [int(i) for i in np.argsort(-scores, kind="stable")]
        return items.retrieval(order, budget, self.counter)

    def describe(self) -> dict[str, Any]:
        return {"window": self.window, "stride": self.stride, "packing": "first-fit"}

    def close(self) -> None:
        self._items.clear()
        self._vectors.clear()


class Bm25Arm:
    """Turn-level Okapi BM25 over stemmed content words."""

    name = "bm25"

    def __init__(self, counter: TokenCounter, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.counter = counter
        self.k1 = k1
        self.b = b
        self._items: dict[str, _Items] = {}
        self._index: dict[str, BM25] = {}

    def prepare(self, conversation_id: str) -> None:
        pass

    def ingest(self, conversation: Conversation) -> None:
        texts = [turn_line(s, t) for s, t in conversation.turns()]
        docs = [terms(turn_line(s, t, dated=False)) for s, t in conversation.turns()]
        ids: list[tuple[str, ...]] = [(t.id,) for _, t in conversation.turns()]
        self._items[conversation.id] = _Items(texts, ids, self.counter.count_many(texts))
        self._index[conversation.id] = BM25(docs, k1=self.k1, b=self.b)

    def retrieve(self, conversation_id: str, question: str, budget: int) -> Retrieval:
        ranked = self._index[conversation_id].rank(terms(question))
        return self._items[conversation_id].retrieval([i for i, _ in ranked], budget, self.counter)

    def describe(self) -> dict[str, Any]:
        return {"k1": self.k1, "b": self.b, "unit": "turn", "packing": "first-fit"}

    def close(self) -> None:
        self._items.clear()
        self._index.clear()


def import_batches(
    sessions: Sequence[Sequence[Message]], limit: int = MAX_MESSAGES_PER_REQUEST
) -> list[list[Message]]:
    """Sessions packed in order into requests of at most ``limit`` messages, as a client
    importing a history posts them: whole sessions together, a longer one split."""
    batches: list[list[Message]] = []
    current: list[Message] = []
    for session in sessions:
        if current and len(current) + len(session) > limit:
            batches.append(current)
            current = []
        for start in range(0, len(session), limit):
            part = list(session[start : start + limit])
            if len(current) + len(part) > limit:
                batches.append(current)
                current = []
            current += part
    if current:
        batches.append(current)
    return batches


class NmafcArm:
    """The engine as a service runs it for a history imported in bulk: the sessions posted
    in requests of up to the API's message limit (each a remember()), then maintain()."""

    name = "nmafc"

    def __init__(
        self,
        embedder: Embedder,
        *,
        preset_name: str | None = None,
        engine_per_conversation: bool = True,
        agent_id: str = "eval",
        import_limit: int = MAX_MESSAGES_PER_REQUEST,
    ) -> None:
        self.embedder = embedder
        self.engine_per_conversation = engine_per_conversation
        self.import_limit = import_limit
        self.agent_id = agent_id
        self._tmp = tempfile.TemporaryDirectory(prefix="nmafc-eval-")
        self._engines: dict[str, MemoryEngine] = {}  # conversation → the engine holding it
        self._shared: MemoryEngine | None = None
        self._opened = 0
        self._turns: dict[str, dict[int, str]] = {}  # conversation → engine turn id → dataset id
        self.preset_name = preset_name or self._settings(Path(self._tmp.name)).retrieval.preset

    def _settings(self, data_dir: Path) -> Settings:
        # Explicit stores under the temp dir: an NMAFC_COLD_URI / NMAFC_HOT_URI in the
        # environment must never point the benchmark at a real store.
        return load_settings(
            data_dir=data_dir,
            cold={"uri": f"sqlite:///{data_dir / 'cold.db'}"},
            hot={"uri": str(data_dir / "hot")},
            consolidation={"inline": False},
        )

    def prepare(self, conversation_id: str) -> None:
        """Open the engine this conversation goes into (a fresh one unless shared)."""
        if not self.engine_per_conversation and self._shared is not None:
            engine = self._shared
        else:
            self._opened += 1
            data_dir = Path(self._tmp.name) / f"engine-{self._opened}"
            data_dir.mkdir(parents=True)
            engine = MemoryEngine.open(self._settings(data_dir), embedder=self.embedder)
            if not self.engine_per_conversation:
                self._shared = engine
        self._engines[conversation_id] = engine

    def scope(self, conversation_id: str) -> Scope:
        """The scope a conversation is stored under (ids made safe for scope validation)."""
        return Scope(self.agent_id, _UNSAFE_ID.sub("_", conversation_id)[:128])

    def ingest(self, conversation: Conversation) -> None:
        if conversation.id not in self._engines:
            self.prepare(conversation.id)
        engine = self._engines[conversation.id]
        scope = self.scope(conversation.id)
        mapping = self._turns.setdefault(conversation.id, {})
        sessions = [
            [
                Message(
                    content=turn.text,
                    role=turn.role,
                    speaker=turn.speaker,
                    occurred_at=session.occurred_at + timedelta(seconds=i),
                    captions=turn.captions,
                )
                for i, turn in enumerate(session.turns)
            ]
            for session in conversation.sessions
        ]
        sources = [turn.id for session in conversation.sessions for turn in session.turns]
        done = 0
        # One write per request, not per session: each write is a Cold commit and a Hot
        # merge, and the embedder sorts a larger batch into less padding.
        for batch in import_batches(sessions, self.import_limit):
            result = engine.remember(scope, batch)
            said = sources[done : done + len(batch)]
            for stored, source in zip(result.turns, said, strict=True):
                mapping[stored.id] = source
            done += len(batch)
        engine.maintain(scope)  # what a running service would have done by question time

    def retrieve(self, conversation_id: str, question: str, budget: int) -> Retrieval:
        result = self._engines[conversation_id].recall(
            self.scope(conversation_id),
            question,
            RecallOptions(budget_tokens=budget, reinforce=False),
            preset_name=self.preset_name,
        )
        mapping = self._turns[conversation_id]
        ranked: list[int] = []
        for hit in result.hits:
            if hit.turn is not None:
                ranked.append(hit.turn.id)
            elif hit.record is not None:
                ranked.extend(hit.record.source_turn_ids)
        return Retrieval(
            context=result.context,
            turn_ids=dedupe(mapping[t] for t in result.evidence_turn_ids if t in mapping),
            tokens=result.tokens,
            ranked_turns=dedupe(mapping[t] for t in ranked if t in mapping),
        )

    def describe(self) -> dict[str, Any]:
        # The engine's effective non-storage settings (its stores are temporary).
        settings = self._settings(Path(self._tmp.name))
        engine = settings.model_dump(
            mode="json", include={"extractor", "extraction", "decay", "consolidation"}
        )
        return {
            "preset": self.preset_name,
            # 0: every recall searched in LanceDB and the Cold ROM, no working set in RAM.
            "hot_cache_max_mb": settings.hot.cache_max_mb,
            "reinforce": False,
            "engine_per_conversation": self.engine_per_conversation,
            "engine": engine,
        }

    def close(self) -> None:
        for engine in dict.fromkeys(self._engines.values()):
            engine.close()
        self._engines.clear()
        self._shared = None
        self._tmp.cleanup()

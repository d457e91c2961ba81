"""The session-document baseline: one vector per session, sessions ranked by cosine.

This is the method behind MemPalace's published LongMemEval figures: each session becomes
one document made of its user turns, embedded once (the embedder truncates it at its window,
as any single-vector store does); a question is embedded and the sessions are ranked by
cosine. The context then holds the best sessions' turns within the same budget as every
other arm: sessions in rank order, each one's turns in the order they were said under its
date, a turn that would overflow skipped and the next one tried (the renderer's policy).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from nmafc.core.rendering import format_date
from nmafc.embedding.base import Embedder
from nmafc.embedding.tokens import TokenCounter
from nmafc.evaluation.arms import Retrieval, turn_line
from nmafc.evaluation.loaders import Conversation, Session


def session_document(session: Session) -> str:
    """The text a session is embedded as: its user turns (all turns if it has none)."""
    users = [t for t in session.turns if t.role == "user"] or list(session.turns)
    return "\n".join(t.full_text() for t in users)


@dataclass(slots=True)
class _Sessions:
    """A conversation's sessions, their turn lines and token costs, and one vector each."""

    sessions: tuple[Session, ...]
    headers: list[str]  # "[8 May 2023]" per session
    header_costs: list[int]
    lines: list[list[str]]  # per session, per turn: "Speaker: text"
    costs: list[list[int]]
    vectors: npt.NDArray[np.float32]


class SessionsArm:
    """Sessions as single documents (user turns), ranked by cosine to the question."""

    name = "sessions"

    def __init__(self, embedder: Embedder, counter: TokenCounter) -> None:
        self.embedder = embedder
        self.counter = counter
        self._data: dict[str, _Sessions] = {}

    def prepare(self, conversation_id: str) -> None:
        pass

    def ingest(self, conversation: Conversation) -> None:
        sessions = conversation.sessions
        headers = [f"[{format_date(s.occurred_at)}]" for s in sessions]
        lines = [[turn_line(s, t, dated=False) for t in s.turns] for s in sessions]
        flat = [line for per in lines for line in per]
        flat_costs = self.counter.count_many(flat) if flat else []
        costs: list[list[int]] = []
        start = 0
        for per in lines:
            costs.append(list(flat_costs[start : start + len(per)]))
            start += len(per)
        documents = [session_document(s) for s in sessions]
        vectors = (
            np.asarray(self.embedder.embed(documents), dtype=np.float32)
            if documents
            else np.zeros((0, 0), dtype=np.float32)
        )
        self._data[conversation.id] = _Sessions(
            sessions,
            headers,
            self.counter.count_many(headers) if headers else [],
            lines,
            costs,
            vectors,
        )

    def rank(self, conversation_id: str, question: str) -> list[int]:
        """Session indexes, most similar to ``question`` first (ties in session order)."""
        data = self._data[conversation_id]
        if not data.sessions:
            return []
        query = np.asarray(self.embedder.embed([question])[0], dtype=np.float32)
        scores = data.vectors @ query
        return [int(i) for i in np.argsort(-scores, kind="stable")]

    def retrieve(self, conversation_id: str, question: str, budget: int) -> Retrieval:
        data = self._data[conversation_id]
        order = self.rank(conversation_id, question)
        chosen = _pack_sessions(order, data, budget)
        context = self._render(data, chosen)
        tokens = self.counter.count(context)
        while tokens > budget and chosen:  # never expected: the costs add up by construction
            session, turns = chosen[-1]
            chosen[-1] = (session, turns[:-1])
            if not chosen[-1][1]:
                chosen.pop()
            context = self._render(data, chosen)
            tokens = self.counter.count(context)
        turn_ids = [data.sessions[s].turns[i].id for s, turns in chosen for i in turns]
        ranked = [t.id for s in order for t in data.sessions[s].turns]
        return Retrieval(context=context, turn_ids=turn_ids, tokens=tokens, ranked_turns=ranked)

    @staticmethod
    def _render(data: _Sessions, chosen: list[tuple[int, list[int]]]) -> str:
        blocks = [
            "\n".join([data.headers[s], *(data.lines[s][i] for i in turns)]) for s, turns in chosen
        ]
        return "\n\n".join(blocks)

    def describe(self) -> dict[str, Any]:
        return {
            "unit": "session",
            "document": "the session's user turns, one vector (truncated at the embedder window)",
            "context": "best sessions' turns in rank order, first-fit within the budget",
        }

    def close(self) -> None:
        self._data.clear()


def _pack_sessions(order: list[int], data: _Sessions, budget: int) -> list[tuple[int, list[int]]]:
    """(session, turn indexes) taken in rank order while they fit; the header costs once."""
    chosen: list[tuple[int, list[int]]] = []
    used = 0
    for s in order:
        taken: list[int] = []
        header = data.header_costs[s]
        for i, cost in enumerate(data.costs[s]):
            extra = cost + (0 if taken else header)
            if used + extra <= budget:
                taken.append(i)
                used += extra
        if taken:
            chosen.append((s, taken))
        if used >= budget:
            break
    return chosen

"""Rendering recalled memory as a small, dated, token-budgeted context.

::

    <FACTS>
    - [8 May 2023] Caroline went to a LGBTQ support group yesterday (7 May 2023).
    - [9 June 2023 → 3 July 2023, override] Caroline lives in Paris.
    </FACTS>
    <SOURCES>
    [8 May 2023 · turn 3] Caroline: I went to a LGBTQ support group yesterday and it was …
    </SOURCES>

Candidates are packed in rank order. A fact costs a line and stands in for its source turn;
the best source turns are hydrated whole (graded hydration), later turn hits only as their
best-matching sentences, and a turn already stood in for by a chosen fact is not repeated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from nmafc.core.records import MemoryRecord
from nmafc.core.text import overlap, sentences
from nmafc.core.turns import Turn

TokenCount = Callable[[str], int]
OPEN_FACTS, CLOSE_FACTS, OPEN_SOURCES, CLOSE_SOURCES = (
    "<FACTS>",
    "</FACTS>",
    "<SOURCES>",
    "</SOURCES>",
)


def format_date(moment: datetime) -> str:
    """``7 May 2023``: unambiguous in every locale, and how people write dates in chat."""
    return f"{moment.day} {moment.strftime('%B %Y')}"


def fact_line(record: MemoryRecord) -> str:
    """One fact, prefixed with when it was learnt; closed facts show their whole window."""
    start = format_date(record.valid_at_time)
    if record.invalid_at is None:
        return f"- [{start}] {record.content}"
    end = (
        format_date(record.invalid_at_time)
        if record.invalid_at_time
        else f"turn {record.invalid_at:g}"
    )
    return f"- [{start} → {end}, {record.invalid_reason}] {record.content}"


def turn_line(turn: Turn, text: str | None = None) -> str:
    """One source turn, whole or trimmed to ``text``."""
    body = turn.content if text is None else text
    captions = turn.extra.get("captions") if turn.extra else None
    if text is None and captions:
        body = f"{body} [shared an image: {'; '.join(captions)}]"
    return f"[{format_date(turn.occurred_at)} · turn {turn.turn:g}] {turn.speaker}: {body}"


def best_lines(text: str, terms: Sequence[str], keep: int) -> str:
    """The ``keep`` sentences of ``text`` sharing most terms with the query, in text order."""
    parts = sentences(text)
    if len(parts) <= keep:
        return text
    ranked = sorted(range(len(parts)), key=lambda i: (-overlap(list(terms), parts[i]), i))
    return " … ".join(parts[i] for i in sorted(ranked[:keep]))


@dataclass(frozen=True, slots=True)
class Candidate:
    """One ranked item: a fact (with its source turns, if known) or a raw turn."""

    record: MemoryRecord | None = None
    turn: Turn | None = None
    sources: tuple[Turn, ...] = ()


@dataclass(frozen=True, slots=True)
class Hydration:
    """Graded hydration: how many source turns are shown whole, how much of the rest."""

    full_turns: int = 3
    trimmed_lines: int = 1
    source_share: float = 0.4


@dataclass(slots=True)
class Rendered:
    text: str
    tokens: int
    fact_ids: list[str] = field(default_factory=list)
    turn_ids: list[int] = field(default_factory=list)
    covered_turn_ids: list[int] = field(default_factory=list)


def render(
    candidates: Sequence[Candidate],
    *,
    budget_tokens: int,
    count: TokenCount,
    query_terms: Sequence[str] = (),
    hydration: Hydration = Hydration(),  # noqa: B008 - frozen value object
) -> Rendered:
    """Pack ``candidates`` (best first) into at most ``budget_tokens`` tokens."""
    wrapper = count(f"{OPEN_FACTS}\n{CLOSE_FACTS}\n{OPEN_SOURCES}\n{CLOSE_SOURCES}")
    available = max(0, budget_tokens - wrapper)
    source_cap = int(available * hydration.source_share)
    facts: list[tuple[MemoryRecord, str]] = []
    sources: dict[int, str] = {}
    covered: dict[int, None] = {}
    used = used_by_sources = 0
    whole_turns = 0
    deferred: list[tuple[int, str]] = []

    def take_source(turn: Turn, whole: bool) -> None:
        nonlocal used, used_by_sources, whole_turns
        if turn.id in sources or turn.retracted:
            return
        line = turn_line(
            turn, None if whole else best_lines(turn.content, query_terms, hydration.trimmed_lines)
        )
        cost = count(line) + 1
        if used + cost > available:
            return
        if used_by_sources + cost > source_cap:
            deferred.append((turn.id, line))  # may still fit once facts are placed
            return
        sources[turn.id] = line
        covered.setdefault(turn.id, None)
        used += cost
        used_by_sources += cost
        whole_turns += whole

    for candidate in candidates:
        if candidate.record is not None:
            line = fact_line(candidate.record)
            cost = count(line) + 1
            if used + cost > available:
                continue
            facts.append((candidate.record, line))
            used += cost
            for turn_id in candidate.record.source_turn_ids:
                covered.setdefault(turn_id, None)
            # The best facts bring their source turns whole: the gist plus the evidence.
            for turn in candidate.sources:
                if whole_turns < hydration.full_turns:
                    take_source(turn, whole=True)
        elif candidate.turn is not None:
            whole = whole_turns < hydration.full_turns
            if not whole and candidate.turn.id in covered:
                continue  # a fact already stands in for this turn
            take_source(candidate.turn, whole)
    for turn_id, line in deferred:
        cost = count(line) + 1
        if turn_id not in sources and used + cost <= available:
            sources[turn_id] = line
            covered.setdefault(turn_id, None)
            used += cost

    parts: list[str] = []
    if facts:
        parts += [OPEN_FACTS, *(line for _, line in facts), CLOSE_FACTS]
    if sources:
        parts += [OPEN_SOURCES, *sources.values(), CLOSE_SOURCES]
    text = "\n".join(parts)
    return Rendered(
        text=text,
        tokens=count(text) if text else 0,
        fact_ids=[record.id for record, _ in facts],
        turn_ids=list(sources),
        covered_turn_ids=list(covered),
    )

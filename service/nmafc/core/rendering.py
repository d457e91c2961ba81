"""Rendering recalled memory as a small, dated, token-budgeted context.

::

    <FACTS>
    8 May 2023:
    - Caroline went to a LGBTQ support group yesterday (7 May 2023).
    9 June 2023:
    - Caroline lives in Paris. (until 3 July 2023: override)
    </FACTS>
    <SOURCES>
    [8 May 2023 · turn 3] Caroline: I went to a LGBTQ support group yesterday (7 May 2023) …
    </SOURCES>

Facts are grouped under the date they were learnt (chronologically), so a date costs its
tokens once per group rather than once per line.

Candidates are packed in rank order. A fact costs a line and stands in for its source turn;
the best source turns are hydrated whole (graded hydration), later turn hits only as their
best-matching sentences, and a turn already stood in for by a chosen fact is not repeated.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache

from nmafc.core.extraction.timeexpr import resolve
from nmafc.core.lifecycle import is_decayed
from nmafc.core.records import MemoryRecord
from nmafc.core.text import overlap, sentences
from nmafc.core.turns import Turn

TokenCount = Callable[[str], int]
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]")
OPEN_FACTS, CLOSE_FACTS, OPEN_SOURCES, CLOSE_SOURCES = (
    "<FACTS>",
    "</FACTS>",
    "<SOURCES>",
    "</SOURCES>",
)


def format_date(moment: datetime) -> str:
    """``7 May 2023``: unambiguous in every locale, and how people write dates in chat."""
    return _format_day(moment.year, moment.month, moment.day)


@lru_cache(maxsize=4096)
def _format_day(year: int, month: int, day: int) -> str:
    # A recall formats ~120 dates, mostly the same few days; strftime is the costly part.
    # Keyed by the calendar day, not the datetime: equal instants in other zones differ.
    return f"{day} {date(year, month, day).strftime('%B %Y')}"


def fact_line(record: MemoryRecord) -> str:
    """One fact under its date header; a closed fact also says until when, and why."""
    content = record.content
    if record.invalid_at is None or is_decayed(record):
        return f"- {content}"  # a faded fact is still true: only contradictions get an end
    end = (
        format_date(record.invalid_at_time)
        if record.invalid_at_time
        else f"turn {record.invalid_at:g}"
    )
    return f"- {content} (until {end}: {record.invalid_reason})"


def date_header(record: MemoryRecord) -> str:
    """The group a fact is listed under: the day it was learnt."""
    return f"{format_date(record.valid_at_time)}:"


def turn_line(turn: Turn, text: str | None = None) -> str:
    """One source turn, whole or trimmed to ``text``, its relative dates made absolute."""
    body = resolve(turn.content if text is None else text, turn.occurred_at)[0]
    captions = turn.extra.get("captions") if turn.extra else None
    if text is None and captions:
        body = f"{body} [shared an image: {'; '.join(captions)}]"
    return f"[{format_date(turn.occurred_at)} · turn {turn.turn:g}] {turn.speaker}: {body}"


def fewest_tokens(text: str) -> int:
    """A lower bound on the WordPiece tokens of ``text``, or of any line that contains it.

    Each whitespace-separated piece holding an ASCII letter or digit is at least one
    token (WordPiece splits pieces further, never joins them). About a tenth of the cost
    of counting, so a long turn that cannot fit is turned down before it is dated and
    counted: on LongMemEval's long assistant turns that was most of a recall's time.
    """
    return sum(1 for piece in text.split() if _ASCII_ALNUM.search(piece))


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
    turn_for_fact: float = 0.0
    """Show a fact's whole source turn instead of the fact when the turn costs at most this
    many times the fact line: the verbatim turn carries more of what was said for about the
    same tokens (0 disables)."""


@dataclass(slots=True)
class Rendered:
    text: str
    tokens: int
    fact_ids: list[str] = field(default_factory=list)
    turn_ids: list[int] = field(default_factory=list)
    covered_turn_ids: list[int] = field(default_factory=list)
    shown_as_turns: list[str] = field(default_factory=list)
    """Facts recalled but shown through their verbatim source turn."""


def render(
    candidates: Sequence[Candidate],
    *,
    budget_tokens: int,
    count: TokenCount,
    query_terms: Sequence[str] = (),
    hydration: Hydration = Hydration(),  # noqa: B008 - frozen value object
) -> Rendered:
    """Pack ``candidates`` (best first) into at most ``budget_tokens`` tokens.

    ``count`` must add up over lines joined by a newline, as WordPiece and whitespace
    counts do: the total is the sum of the lines' counts; and it must never be below
    :func:`fewest_tokens` (neither of those is).
    """
    wrapper = count(f"{OPEN_FACTS}\n{CLOSE_FACTS}\n{OPEN_SOURCES}\n{CLOSE_SOURCES}")
    available = max(0, budget_tokens - wrapper)
    source_cap = int(available * hydration.source_share)
    facts: list[tuple[MemoryRecord, str]] = []
    headers: set[str] = set()
    sources: dict[int, str] = {}
    covered: dict[int, None] = {}
    used = used_by_sources = 0
    whole_turns = 0
    deferred: list[tuple[int, str]] = []

    swapped: list[str] = []
    shown_whole: set[int] = set()

    def swap_for_turn(record: MemoryRecord, sources_: tuple[Turn, ...], fact_cost: int) -> bool:
        """Show the fact's single source turn instead, when that is about as cheap."""
        nonlocal used
        if hydration.turn_for_fact <= 0 or len(sources_) != 1 or not _as_said(record):
            return False
        turn = sources_[0]
        if turn.retracted:
            return False
        if turn.id in sources:
            swapped.append(record.id)
            return True
        least = fewest_tokens(turn.content) + 1
        if least > fact_cost * hydration.turn_for_fact or used + least > available:
            return False  # a long turn: known without dating and counting it
        line = turn_line(turn)
        cost = count(line) + 1
        if cost > fact_cost * hydration.turn_for_fact or used + cost > available:
            return False
        sources[turn.id] = line
        covered.setdefault(turn.id, None)
        used += cost
        swapped.append(record.id)
        return True

    def take_source(turn: Turn, whole: bool) -> None:
        nonlocal used, used_by_sources, whole_turns
        if turn.id in sources or turn.retracted:
            return
        text = (
            turn.content
            if whole
            else best_lines(turn.content, query_terms, hydration.trimmed_lines)
        )
        if used + fewest_tokens(text) + 1 > available:
            return  # cannot fit now, nor later (``used`` only grows)
        line = turn_line(turn, None if whole else text)
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
        if whole:
            shown_whole.add(turn.id)

    for candidate in candidates:
        if candidate.record is not None:
            line = fact_line(candidate.record)
            cost = count(line) + 1
            if swap_for_turn(candidate.record, candidate.sources, cost):
                continue
            hydrated = (
                whole_turns < hydration.full_turns
                and len(candidate.sources) == 1
                and _as_said(candidate.record)
            )
            if hydrated:
                # A best fact brings its source turn whole: the gist plus the evidence. The
                # turn says everything the fact does, so the fact itself is left out.
                turn = candidate.sources[0]
                take_source(turn, whole=True)
                if turn.id in shown_whole:
                    swapped.append(candidate.record.id)
                    continue
            header = date_header(candidate.record)
            if header not in headers:
                cost += count(header) + 1
            if used + cost > available:
                continue
            headers.add(header)
            facts.append((candidate.record, line))
            used += cost
            for turn_id in candidate.record.source_turn_ids:
                covered.setdefault(turn_id, None)
            # The best facts bring their source turns whole: the gist plus the evidence
            # (a single one was offered above already; it did not fit).
            for turn in () if hydrated else candidate.sources:
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
        parts += [OPEN_FACTS, *_grouped(facts), CLOSE_FACTS]
    if sources:
        parts += [OPEN_SOURCES, *sources.values(), CLOSE_SOURCES]
    # Lines are joined by whitespace, which the WordPiece pre-tokeniser splits on, so the
    # text's tokens are the sum of its lines' (each counted, and cached, already).
    text = "\n".join(parts)
    return Rendered(
        text=text,
        tokens=sum(count(part) for part in parts),
        fact_ids=[record.id for record, _ in facts],
        turn_ids=list(sources),
        covered_turn_ids=list(covered),
        shown_as_turns=swapped,
    )


def _as_said(record: MemoryRecord) -> bool:
    """True while the fact still says what its turn said: an edited one may not (v2+)."""
    return record.version == 1


def _grouped(facts: Sequence[tuple[MemoryRecord, str]]) -> list[str]:
    """Fact lines under their date headers, dates in order, facts in rank order within."""
    groups: dict[str, list[str]] = {}
    first_seen: dict[str, datetime] = {}
    for record, line in facts:
        header = date_header(record)
        groups.setdefault(header, []).append(line)
        first_seen.setdefault(header, record.valid_at_time)
    lines: list[str] = []
    for header in sorted(groups, key=lambda h: first_seen[h]):
        lines += [header, *groups[header]]
    return lines

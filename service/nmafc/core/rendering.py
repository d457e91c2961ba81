"""Rendering recalled memory as a small, dated, token-budgeted context.

::

    <FACTS>
    - Caroline went to an LGBTQ support group on 7 May 2023 (valid: turn 3, 8 May 2023 – present)
    </FACTS>
    <SOURCES>
    [8 May 2023 · turn 3] Caroline: I went to a LGBTQ support group yesterday …
    </SOURCES>
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from nmafc.core.records import MemoryRecord
from nmafc.core.turns import Turn

TokenCount = Callable[[str], int]


def format_date(moment: datetime) -> str:
    """``7 May 2023``: unambiguous in every locale, and how people write dates in chat."""
    return f"{moment.day} {moment.strftime('%B %Y')}"


def fact_line(record: MemoryRecord) -> str:
    """One fact with its validity window."""
    start = f"turn {record.valid_at:g}, {format_date(record.valid_at_time)}"
    end = "present" if record.invalid_at is None else f"turn {record.invalid_at:g}"
    return f"- {record.content} (valid: {start} – {end})"


def turn_line(turn: Turn, text: str | None = None) -> str:
    """One source turn, whole or trimmed to ``text``."""
    body = turn.content if text is None else text
    captions = turn.extra.get("captions") if turn.extra else None
    if text is None and captions:
        body = f"{body} [shared an image: {'; '.join(captions)}]"
    return f"[{format_date(turn.occurred_at)} · turn {turn.turn:g}] {turn.speaker}: {body}"


@dataclass(frozen=True, slots=True)
class SourceTurn:
    """A turn to show, whole (``excerpt is None``) or as its best-matching lines."""

    turn: Turn
    excerpt: str | None = None


@dataclass(slots=True)
class Rendered:
    text: str
    tokens: int
    fact_ids: list[str] = field(default_factory=list)
    turn_ids: list[int] = field(default_factory=list)


def render(
    facts: Sequence[MemoryRecord],
    sources: Sequence[SourceTurn],
    *,
    budget_tokens: int,
    count: TokenCount,
    source_share: float = 0.5,
) -> Rendered:
    """Fill ``budget_tokens``: facts in rank order, then source turns, each section tagged.

    ``source_share`` reserves part of the budget for sources so a long fact list cannot
    crowd out the verbatim evidence; whatever one section leaves unused the other may take.
    """
    wrapper = count("<FACTS>\n</FACTS>\n<SOURCES>\n</SOURCES>")
    available = max(0, budget_tokens - wrapper)
    fact_lines = [(r, fact_line(r)) for r in facts]
    source_lines = [(s, turn_line(s.turn, s.excerpt)) for s in sources]
    fact_costs = [count(line) + 1 for _, line in fact_lines]
    source_costs = [count(line) + 1 for _, line in source_lines]
    reserved = min(sum(source_costs), int(available * source_share))
    chosen_facts, used = _fill(fact_costs, available - reserved, skip=set())
    chosen_sources, used_sources = _fill(source_costs, available - used, skip=set())
    # Whatever the sources left unused goes back to facts that did not fit at first.
    extra, extra_used = _fill(fact_costs, available - used - used_sources, skip=set(chosen_facts))
    chosen_facts = sorted(chosen_facts + extra)
    parts: list[str] = []
    if chosen_facts:
        parts += ["<FACTS>", *(fact_lines[i][1] for i in chosen_facts), "</FACTS>"]
    if chosen_sources:
        parts += ["<SOURCES>", *(source_lines[i][1] for i in chosen_sources), "</SOURCES>"]
    text = "\n".join(parts)
    return Rendered(
        text=text,
        tokens=count(text) if text else 0,
        fact_ids=[fact_lines[i][0].id for i in chosen_facts],
        turn_ids=[source_lines[i][0].turn.id for i in chosen_sources],
    )


def _fill(costs: Sequence[int], cap: int, skip: set[int]) -> tuple[list[int], int]:
    """Indexes taken in order while they fit (skipping ones that do not), and tokens used."""
    chosen: list[int] = []
    used = 0
    for index, cost in enumerate(costs):
        if index not in skip and used + cost <= cap:
            chosen.append(index)
            used += cost
    return chosen, used

"""Dates a question names ("on October 13, 2023", "in May 2023"), as periods to look in."""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

_MONTH = (
    r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_MONTHS = {m.lower()[:3]: i for i, m in enumerate(calendar.month_name) if m}
_PATTERNS = [
    (re.compile(rf"\b{_MONTH}\.? (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.I), "mdy"),
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH}\.?,? (\d{{4}})\b", re.I), "dmy"),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), "iso"),
    (re.compile(rf"\b{_MONTH},? (\d{{4}})\b", re.I), "my"),
]  # fmt: skip


def periods(question: str) -> list[tuple[date, date]]:
    """``[(first day, last day)]`` for each date or month the question names."""
    found: list[tuple[date, date]] = []
    taken: list[tuple[int, int]] = []
    for pattern, kind in _PATTERNS:
        for match in pattern.finditer(question):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue
            period = _period(match.groups(), kind)
            if period is not None:
                found.append(period)
                taken.append(match.span())
    return found


def _period(groups: tuple[str | None, ...], kind: str) -> tuple[date, date] | None:
    try:
        if kind == "mdy":
            day = date(
                int(groups[2] or 0), _MONTHS[(groups[0] or "")[:3].lower()], int(groups[1] or 0)
            )
        elif kind == "dmy":
            day = date(
                int(groups[2] or 0), _MONTHS[(groups[1] or "")[:3].lower()], int(groups[0] or 0)
            )
        elif kind == "iso":
            day = date(int(groups[0] or 0), int(groups[1] or 0), int(groups[2] or 0))
        else:
            year, month = int(groups[1] or 0), _MONTHS[(groups[0] or "")[:3].lower()]
            last = calendar.monthrange(year, month)[1]
            return date(year, month, 1), date(year, month, last)
    except (ValueError, KeyError):
        return None
    return day, day + timedelta(days=0)

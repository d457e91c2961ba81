"""Resolving relative time ("yesterday", "last Friday", "two weeks ago") against when it was said.

A fact that says "yesterday" is useless a month later; a fact that says "yesterday (7 May
2023)" answers "when?" forever. The original phrase is kept and the absolute date is added
beside it, so both "7 May 2023" and "the week before 9 June 2023" style answers stay in the
text. Pure regexes over the sentence: fast, deterministic, offline.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
WEEKDAY_ABBR = {name.lower(): i for i, name in enumerate(calendar.day_abbr)}
MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3,
}  # fmt: skip
SEASONS = ("spring", "summer", "autumn", "fall", "winter")


def day(d: date) -> str:
    """``7 May 2023``."""
    return f"{d.day} {calendar.month_name[d.month]} {d.year}"


def month(d: date) -> str:
    """``June 2023``."""
    return f"{calendar.month_name[d.month]} {d.year}"


def _shift_months(d: date, months: int) -> date:
    index = d.year * 12 + (d.month - 1) + months
    year, month0 = divmod(index, 12)
    return date(year, month0 + 1, min(d.day, calendar.monthrange(year, month0 + 1)[1]))


def _count(text: str) -> int:
    text = text.lower().strip()
    return int(text) if text.isdigit() else NUMBER_WORDS.get(text, 1)


def _weekday_index(name: str) -> int:
    name = name.lower().rstrip(".")
    if name in WEEKDAYS:
        return WEEKDAYS[name]
    return WEEKDAY_ABBR.get(name[:3], 0)


@dataclass(frozen=True, slots=True)
class Resolved:
    """One time phrase found in a sentence and what it means."""

    start: int
    end: int
    phrase: str
    meaning: str


_NUM = (
    r"(\d+|a couple of|a couple|couple of|a few|few|several|an?|one|two|three|four|five|six|"
    r"seven|eight|nine|ten|eleven|twelve)"
)
_DAY = (
    r"(monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\.?"
)

Rule = tuple[re.Pattern[str], Callable[[re.Match[str], date], str | None]]


def _rules() -> list[Rule]:
    def r(pattern: str) -> re.Pattern[str]:
        return re.compile(rf"\b{pattern}\b", re.IGNORECASE)

    def weekday_before(m: re.Match[str], said: date) -> str:
        target = _weekday_index(m.group(1))
        back = (said.weekday() - target) % 7 or 7
        weekday = calendar.day_name[target]
        return f"the {weekday} before {day(said)}, {day(said - timedelta(days=back))}"

    def weekday_after(m: re.Match[str], said: date) -> str:
        target = _weekday_index(m.group(1))
        ahead = (target - said.weekday()) % 7 or 7
        weekday = calendar.day_name[target]
        return f"the {weekday} after {day(said)}, {day(said + timedelta(days=ahead))}"

    def ago(m: re.Match[str], said: date) -> str | None:
        n, unit = _count(m.group(1)), m.group(2).lower().rstrip("s")
        if unit == "day":
            return day(said - timedelta(days=n))
        if unit == "week":
            around = day(said - timedelta(weeks=n))
            return f"{n} week{'s' * (n > 1)} before {day(said)}, around {around}"
        if unit == "weekend":
            return f"{n} weekend{'s' * (n > 1)} before {day(said)}"
        if unit == "month":
            return month(_shift_months(said, -n))
        if unit == "year":
            return str(said.year - n)
        return None

    def later(m: re.Match[str], said: date) -> str | None:
        n, unit = _count(m.group(1)), m.group(2).lower().rstrip("s")
        if unit == "day":
            return day(said + timedelta(days=n))
        if unit == "week":
            around = day(said + timedelta(weeks=n))
            return f"{n} week{'s' * (n > 1)} after {day(said)}, around {around}"
        if unit == "month":
            return month(_shift_months(said, n))
        if unit == "year":
            return str(said.year + n)
        return None

    def season(m: re.Match[str], said: date) -> str:
        which, name = m.group(1).lower(), m.group(2).lower()
        name = "autumn" if name == "fall" else name
        year = said.year
        current = {12: "winter", 1: "winter", 2: "winter", 3: "spring", 4: "spring", 5: "spring",
                   6: "summer", 7: "summer", 8: "summer"}.get(said.month, "autumn")  # fmt: skip
        order = ["winter", "spring", "summer", "autumn"]
        if which == "last":
            year -= 1 if order.index(name) >= order.index(current) else 0
        elif which == "next":
            year += 1 if order.index(name) <= order.index(current) else 0
        return f"{name} {year}"

    return [
        (r(r"the day before yesterday"), lambda m, d: day(d - timedelta(days=2))),
        (r(r"the day after tomorrow"), lambda m, d: day(d + timedelta(days=2))),
        (r(r"yesterday|last night"), lambda m, d: day(d - timedelta(days=1))),
        (r(r"today|tonight|this morning|this afternoon|this evening"), lambda m, d: day(d)),
        (r(r"tomorrow"), lambda m, d: day(d + timedelta(days=1))),
        (r(rf"{_NUM} (days?|weeks?|weekends?|months?|years?) ago"), ago),
        (r(rf"(?:in|after) {_NUM} (days?|weeks?|months?|years?)"), later),
        (r(rf"{_NUM} (days?|weeks?|months?|years?) from now"), later),
        (r(rf"(?:last|this past|past) {_DAY}"), weekday_before),
        (r(rf"(?:next|this coming|coming) {_DAY}"), weekday_after),
        (r(r"last weekend|this past weekend|past weekend"), lambda m, d: f"the weekend before {day(d)}"),  # noqa: E501
        (r(r"next weekend|this weekend|this coming weekend"), lambda m, d: f"the weekend after {day(d)}"),  # noqa: E501
        (r(r"last week|this past week|past week"), lambda m, d: f"the week before {day(d)}"),
        (r(r"next week"), lambda m, d: f"the week after {day(d)}"),
        (r(r"this week"), lambda m, d: f"the week of {day(d)}"),
        (r(r"last month|this past month"), lambda m, d: month(_shift_months(d, -1))),
        (r(r"next month"), lambda m, d: month(_shift_months(d, 1))),
        (r(r"this month"), lambda m, d: month(d)),
        (r(r"last year|this past year"), lambda m, d: str(d.year - 1)),
        (r(r"next year"), lambda m, d: str(d.year + 1)),
        (r(r"this year"), lambda m, d: str(d.year)),
        (r(rf"(last|this|next) ({'|'.join(SEASONS)})"), season),
    ]  # fmt: skip


_RULES = _rules()
# Every rule's phrase holds one of these words, so a text without any needs no rule run.
# Rendering resolves every candidate turn at each recall, mostly text with no time phrase,
# and the rules cost about 0.7 ms per long turn (benchmarks/JOURNAL.md).
_ANCHOR = re.compile(
    rf"\b(?:yesterday|tomorrow|today|tonight|night|morning|afternoon|evening|now|"
    rf"days?|weeks?|weekends?|months?|years?|{_DAY[1:-4]}|{'|'.join(SEASONS)})\b",
    re.IGNORECASE,
)


def find(sentence: str, said_at: datetime | date) -> list[Resolved]:
    """Every relative time phrase in ``sentence`` with its absolute meaning, left to right."""
    if _ANCHOR.search(sentence) is None:
        return []
    said = said_at.date() if isinstance(said_at, datetime) else said_at
    taken: list[tuple[int, int]] = []
    found: list[Resolved] = []
    for pattern, meaning_of in _RULES:
        for match in pattern.finditer(sentence):
            span = match.span()
            if any(span[0] < end and start < span[1] for start, end in taken):
                continue  # a longer phrase already claimed this text
            meaning = meaning_of(match, said)
            if meaning:
                taken.append(span)
                found.append(Resolved(span[0], span[1], match.group(0), meaning))
    return sorted(found, key=lambda r: r.start)


def resolve(sentence: str, said_at: datetime | date) -> tuple[str, list[Resolved]]:
    """``sentence`` with each relative phrase followed by its absolute date in parentheses."""
    found = find(sentence, said_at)
    out = sentence
    for item in reversed(found):
        out = f"{out[: item.end]} ({item.meaning}){out[item.end :]}"
    return out, found

"""The answer-type rule (SPEC §7): when a question names its answer's type, say so.

"Which state did she move to?" wants a state, not the city the memory mentions; "how old"
wants an age, not a birth date. One line in the chat prompt tells the model to answer at
the level the question names. Questions that name no type get no line.
"""

from __future__ import annotations

import re

# (pattern, what the answer is, an example of answering at that level). First match wins,
# so the more specific patterns come first ("what day of the week" before "what day").
_RULES: tuple[tuple[re.Pattern[str], str, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), kind, example)
    for pattern, kind, example in (
        (r"\bhow old\b", "an age", "'34 years old', not a birth date"),
        (r"\bhow many\b", "a count", "'3', not a list of the items"),
        (r"\bhow much\b", "an amount", "'$40' or '2 kg'"),
        (r"\bhow long\b", "a duration", "'6 months', not the start and end dates"),
        (r"\bhow often\b", "a frequency", "'twice a week'"),
        (r"\b(?:which|what) day of the week\b", "a day of the week", "'Tuesday'"),
        (r"\b(?:which|what) (?:year)\b|\bin what year\b", "a year", "'2022', not a full date"),
        (r"\b(?:which|what) month\b", "a month", "'May 2023', not a full date"),
        (r"\b(?:which|what) (?:date|day)\b", "a date", "'7 May 2023'"),
        (r"\bwhat time\b", "a time of day", "'6 pm'"),
        (r"\b(?:which|what) (?:u\.?s\.? )?state\b", "a state", "'Ohio', not a city in it"),
        (r"\b(?:which|what) country\b", "a country", "'Sweden', not a city in it"),
        (r"\b(?:which|what) (?:city|town)\b", "a city or town", "'Porto', not its country"),
        (r"\b(?:which|what) (?:colou?r)\b", "a colour", "'dark green'"),
        (r"\b(?:which|what) language\b", "a language", "'Portuguese'"),
        (r"\b(?:which|what) (?:breed|species)\b", "a breed or species", "'a beagle'"),
        (r"\b(?:which|what) (?:instrument)\b", "an instrument", "'the violin'"),
        (r"\b(?:which|what) (?:sport)\b", "a sport", "'tennis'"),
    )
)


def answer_type(question: str) -> str | None:
    """What kind of answer ``question`` names ("a state", "an age"), or None."""
    for pattern, kind, _ in _RULES:
        if pattern.search(question):
            return kind
    return None


def answer_type_line(question: str) -> str | None:
    """One prompt line telling the model to answer at the level the question names, or None."""
    for pattern, kind, example in _RULES:
        if pattern.search(question):
            return (
                f"The question asks for {kind}: answer with {kind} at exactly that level "
                f"(e.g. {example}), even when the memory gives more detail or a different "
                "level."
            )
    return None

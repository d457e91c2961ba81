"""Rewriting first and second person so a sentence stands alone.

"I went to a support group" said by Caroline becomes "Caroline went to a support group";
"You'd be a great counselor" said to Caroline becomes "Caroline would be a great counselor".
A stored fact outlives its conversation: without this, "I" means nobody.
"""

from __future__ import annotations

import re

# Contractions first, so "I'm" is not seen as "I" followed by "'m".
_FIRST_PERSON: list[tuple[str, str]] = [
    (r"I'm|I am|Im", "{s} is"),
    (r"I've|I have", "{s} has"),
    (r"I'll|I will", "{s} will"),
    (r"I'd", "{s} would"),
    (r"I was", "{s} was"),
    (r"myself", "{s}"),
    (r"mine", "{s}'s"),
    (r"my", "{s}'s"),
    (r"me", "{s}"),
    (r"I", "{s}"),
]
_SECOND_PERSON: list[tuple[str, str]] = [
    (r"you're|you are", "{a} is"),
    (r"you've|you have", "{a} has"),
    (r"you'll|you will", "{a} will"),
    (r"you'd", "{a} would"),
    (r"you were", "{a} was"),
    (r"yourself", "{a}"),
    (r"yours", "{a}'s"),
    (r"your", "{a}'s"),
    (r"you", "{a}"),
]
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})


def _compile(table: list[tuple[str, str]]) -> list[tuple[re.Pattern[str], str]]:
    compiled = []
    for pattern, replacement in table:
        # "I" is only the pronoun in capitals; me / my / you are matched in any case.
        flags = 0 if pattern.startswith("I") else re.IGNORECASE
        compiled.append((re.compile(rf"(?<![\w'])(?:{pattern})(?![\w'])", flags), replacement))
    return compiled


_FIRST = _compile(_FIRST_PERSON)
_SECOND = _compile(_SECOND_PERSON)


def first_person(sentence: str, speaker: str) -> str:
    """Replace I / me / my / mine (and contractions) with the speaker's name."""
    text = sentence.translate(_APOSTROPHES)
    for pattern, replacement in _FIRST:
        text = pattern.sub(replacement.format(s=speaker), text)
    return _possessive_fix(text, speaker)


def second_person(sentence: str, addressee: str) -> str:
    """Replace you / your (and contractions) with the addressee's name."""
    text = sentence.translate(_APOSTROPHES)
    for pattern, replacement in _SECOND:
        text = pattern.sub(replacement.format(a=addressee), text)
    return _possessive_fix(text, addressee)


def _possessive_fix(text: str, name: str) -> str:
    # "Caroline's's" can appear when the source already had a possessive; and a sentence
    # should not start with a lower-case name fragment.
    return text.replace(f"{name}'s's", f"{name}'s")

"""Aggregate questions: those whose answer is a list gathered from many turns.

"Which cities has Jon visited?", "What activities does Ann do?", "How many times has Bo
been to the beach?", "What do Ann and Bo both like?": each item of the answer was said on
its own day, usually in words that share little with the question. Recall recognises such
a question to rank everything said about the people it names (see
``engine.fanout``), not only what resembles the whole question.

The cues are English grammar, not any dataset's phrasing: a count, a plural or a kind
asked for, an accumulating "ever"/"both"/"in common", or the present perfect ("what has
Ann painted?", "where has Bo camped?") that asks for every occasion so far.
"""

from __future__ import annotations

import re

from nmafc.core.text import STOPWORDS

_COUNT_OR_LIST = re.compile(
    r"\bhow many\b|\bhow often\b|\bwhat are some\b|\bwhat were some\b|\bin common\b"
    r"|\bboth\b|\bever\b|\b(?:kinds?|types?|sorts?) of\b|\b(?:list|name) (?:all|some|the)\b",
    re.IGNORECASE,
)
# "what books", "which cities", "what LGBTQ+ events": a wh-word then, within two words,
# a plural noun (checked below, so that "what does" or "which is" do not count).
_WH_NOUN = re.compile(r"\b(?:what|which)\s+((?:[\w+/-]+\s+){0,2}?)([a-z]+s)\b", re.IGNORECASE)
# The present perfect asks for every occasion so far: "what has Ann painted?".
_PERFECT = re.compile(
    r"^\s*(?:what|where|who|which)\b.*\b(?:has|have)\b\s+(?:\w+\s+){1,4}?\w+(?:ed|en|wn|ne|t)\b",
    re.IGNORECASE,
)
# Words ending in "s" that are not plural nouns where a wh-word precedes them.
_NOT_PLURAL = frozenset(
    {
        "does",
        "is",
        "was",
        "has",
        "his",
        "hers",
        "its",
        "this",
        "yours",
        "ours",
        "theirs",
        "as",
        "us",
        "always",
        "sometimes",
        "perhaps",
        "unless",
        "thus",
        "plus",
        "less",
    }  # fmt: skip
)


def is_aggregate(question: str) -> bool:
    """Whether ``question`` asks for a count or a list of things said over time."""
    if _COUNT_OR_LIST.search(question):
        return True
    for match in _WH_NOUN.finditer(question):
        plural = match.group(2).lower()
        between = match.group(1).split()
        if plural in _NOT_PLURAL or plural.endswith("ss") or plural in STOPWORDS:
            continue
        if any(word.lower() in STOPWORDS or word.lower() in _NOT_PLURAL for word in between):
            continue  # "what does Ann's kids", "which is his": the noun is not the wh's
        return True
    return bool(_PERFECT.search(question))

"""Plain-text helpers shared by keyword search, extraction and evaluation."""

from __future__ import annotations

import functools
import re

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i
    i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
    myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's which while who who's whom why why's will with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves also just
    really yeah yes oh ok okay hey hi hello thanks thank did does""".split()
)

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits, simple apostrophes kept)."""
    return [w.lower() for w in _WORD.findall(text)]


def keyword_terms(text: str, limit: int = 24) -> list[str]:
    """Distinct content words of ``text`` in order of appearance, for keyword queries."""
    seen: dict[str, None] = {}
    for word in words(text):
        base = word.split("'", 1)[0]
        if base in STOPWORDS or word in STOPWORDS or len(base) < 2 and not base.isdigit():
            continue
        seen.setdefault(base, None)
        if len(seen) >= limit:
            break
    return list(seen)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'A-Z0-9])|\n+")


_ABBREVIATION = re.compile(
    r"\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|Mt|vs|etc|e\.g|i\.e|approx|No|Fig)\.$", re.IGNORECASE
)


def sentences(text: str) -> list[str]:
    """Split prose into sentences (chat-grade: ., !, ?, line breaks; common abbreviations kept)."""
    parts = [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]
    merged: list[str] = []
    for part in parts:
        if merged and _ABBREVIATION.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A crude, fast stem for overlap scoring: lower-case, common suffixes dropped.

    Cached: rendering scores every sentence of every candidate turn against the query, a
    few thousand words a recall, mostly the same words (measured on LongMemEval turns:
    see benchmarks/JOURNAL.md).
    """
    w = word.lower()
    for suffix in ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


def overlap(query_terms: list[str], text: str) -> int:
    """How many distinct query terms (by stem) occur in ``text``."""
    present = {stem(w) for w in words(text)}
    return sum(1 for term in dict.fromkeys(stem(t) for t in query_terms) if term in present)

"""Keyword relevance: which query terms to search for, and how BM25 weighs a match.

Shared by the Cold ROM's FTS5 / tsvector search and the Hot tier's RAM index, so both
drop the same common terms and the RAM index ranks as FTS5's ``bm25()`` does.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache

import Stemmer

from nmafc.core.text import STOPWORDS

# A term in more than 1/COMMON_SHARE of a scope's documents is dropped from its keyword
# queries (the speaker's own name, once "I" is resolved, is in half of them) ...
COMMON_SHARE = 10
# ... unless it occurs in at most this many: in a small scope every word is rare enough.
COMMON_FLOOR = 20

# FTS5's bm25() constants.
K1 = 1.2
B = 0.75
_IDF_FLOOR = 1e-6

_TOKEN = re.compile(r"[^\W_]+")
_porter = Stemmer.Stemmer("porter")
_porter_lock = threading.Lock()  # a Stemmer instance is not safe across threads


def common_cap(corpus_size: int | None, terms: int) -> int | None:
    """Documents a term may occur in and still be searched for; None keeps every term."""
    if corpus_size is None or corpus_size <= COMMON_FLOOR or terms <= 1:
        return None
    return max(COMMON_FLOOR, corpus_size // COMMON_SHARE)


def discriminating(terms: Sequence[str], cap: int, count: Callable[[str, int], int]) -> list[str]:
    """The terms occurring in at most ``cap`` documents of the scope.

    A common term (the speaker's own name, once "I" is resolved) matches documents that
    share nothing else with the question; short ones ("Thanks, Sam!") even rank high for
    it and push out the documents that match the question's rarer words. Ranking its
    postings also dominates the cost of a query on a large scope. ``count`` may stop at
    ``cap + 1``. When every term is common, none is more telling than another: all stay.
    """
    kept = [term for term in terms if count(term, cap + 1) <= cap]
    return kept or list(terms)


def idf(documents: int, frequency: int) -> float:
    """FTS5's inverse document frequency, floored so a very common term still counts."""
    value = math.log((documents - frequency + 0.5) / (frequency + 0.5))
    return value if value > 0 else _IDF_FLOOR


def tie_key(record_id: str) -> int:
    """Orders records of equal relevance, the same way in every process and every set."""
    return int.from_bytes(tie_digest(record_id), "big", signed=True)


def tie_digest(record_id: str) -> bytes:
    """The 8 bytes :func:`tie_key` reads as a signed big-endian integer."""
    return hashlib.blake2b(record_id.encode(), digest_size=8).digest()


@lru_cache(maxsize=65536)
def index_term(word: str) -> str:
    """One word as FTS5's ``porter unicode61`` tokenizer indexes it."""
    lowered = word.lower()
    if not lowered.isascii():
        decomposed = unicodedata.normalize("NFKD", lowered)
        lowered = "".join(c for c in decomposed if not unicodedata.combining(c))
    with _porter_lock:
        return str(_porter.stemWord(lowered))


def index_terms(text: str) -> tuple[list[str], int]:
    """The searchable terms of ``text`` as FTS5's ``porter unicode61`` indexes them, and
    its length in tokens.

    Anything that is not a letter or digit separates tokens, so an entity slug
    (``caroline_support_group``) yields its words. Stop words and single letters are left
    out of the terms (``keyword_terms`` never asks for them) but count in the length, which
    BM25 normalises by.
    """
    tokens = tokens_of(text)
    terms = [term for token in tokens if (term := token_term(token)) is not None]
    return terms, len(tokens)


def tokens_of(text: str) -> list[str]:
    """The tokens of ``text`` as FTS5's ``unicode61`` tokenizer splits it."""
    return _TOKEN.findall(text)


def token_term(token: str) -> str | None:
    """The term one token is indexed under, or None for a stop word or a single letter."""
    if token.isascii() and token.isdigit():
        # Stemming leaves a number as written; numbers are mostly unique (ids, dates),
        # so sending them through index_term's cache would only push words out of it.
        return token
    if (len(token) > 1 or token.isdigit()) and token.lower() not in STOPWORDS:
        return index_term(token)
    return None

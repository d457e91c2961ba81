"""Okapi BM25 over short documents, with the engine's content-word tokenisation."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from nmafc.core.text import STOPWORDS, stem, words


def terms(text: str) -> list[str]:
    """Stemmed content words with repeats (``keyword_terms``' filter, no dedupe or limit)."""
    out: list[str] = []
    for word in words(text):
        base = word.split("'", 1)[0]
        if base in STOPWORDS or word in STOPWORDS or (len(base) < 2 and not base.isdigit()):
            continue
        out.append(stem(base))
    return out


class BM25:
    """An in-memory Okapi BM25 index (k1, b) over tokenised documents."""

    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75):
        self.k1 = k1
        self.b = b
        self.freqs = [Counter(doc) for doc in documents]
        self.lengths = [len(doc) for doc in documents]
        self.n = len(documents)
        self.avgdl = sum(self.lengths) / self.n if self.n else 0.0
        df: Counter[str] = Counter()
        for freq in self.freqs:
            df.update(freq.keys())
        # The '+1' inside the log (Lucene's form) keeps idf positive for very common terms.
        self.idf = {t: math.log(1 + (self.n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    def score(self, query: Sequence[str], index: int) -> float:
        """BM25 score of document ``index`` for the query terms (repeats count once)."""
        freq = self.freqs[index]
        norm = self.k1 * (1 - self.b + self.b * self.lengths[index] / (self.avgdl or 1.0))
        total = 0.0
        for term in dict.fromkeys(query):
            tf = freq.get(term, 0)
            if tf:
                total += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
        return total

    def rank(self, query: Sequence[str]) -> list[tuple[int, float]]:
        """Documents with a positive score, best first (ties by document order)."""
        scored = [(i, self.score(query, i)) for i in range(self.n)]
        positive = [(i, s) for i, s in scored if s > 0]
        positive.sort(key=lambda pair: (-pair[1], pair[0]))
        return positive

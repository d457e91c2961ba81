"""Counting tokens offline with the embedder's own WordPiece vocabulary.

tiktoken downloads its tables at first use, which fails without network; this counter
ships with the package, so every budget (NMAFC's and the benchmark baselines') is
measured by the same ruler.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from tokenizers import Tokenizer

from nmafc.embedding.onnx_minilm import load_tokenizer

# Lines a recall renders (facts, dated headers, source turns) recur from one recall to the
# next; caching their counts saves most of the ~60 encodes per recall (~11 µs each, with
# the GIL held). Sized for the fact lines of ~10^5 records: with 16k entries, searches
# spread over 1,000 scopes of 100 facts missed most lines, and counting took a fifth of
# the server's GIL time. An entry of a typical line is ~0.3 KB (≈ 40 MB when full). Long
# texts (whole rendered contexts) rarely recur and would crowd the cache: counted afresh.
_CACHED_TEXTS = 131_072
_CACHED_CHARS = 1_000


class TokenCounter:
    """``count(text)`` = WordPiece tokens without special tokens."""

    def __init__(self, tokenizer: Tokenizer | None = None, cache_size: int = _CACHED_TEXTS) -> None:
        tok = tokenizer or load_tokenizer()
        self._tokenizer = Tokenizer.from_str(tok.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self._cached = lru_cache(maxsize=cache_size)(self._encode)

    def count(self, text: str) -> int:
        """Tokens in ``text`` (short texts' counts are remembered, least recently used out)."""
        if not text:
            return 0
        return self._cached(text) if len(text) <= _CACHED_CHARS else self._encode(text)

    def _encode(self, text: str) -> int:
        return len(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Tokens in each text, batched."""
        if not texts:
            return []
        encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encoded]


@lru_cache(maxsize=1)
def default_counter() -> TokenCounter:
    """The process-wide counter (the vocabulary is immutable, so sharing it is safe)."""
    return TokenCounter()

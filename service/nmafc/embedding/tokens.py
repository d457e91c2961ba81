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


class TokenCounter:
    """``count(text)`` = WordPiece tokens without special tokens."""

    def __init__(self, tokenizer: Tokenizer | None = None) -> None:
        tok = tokenizer or load_tokenizer()
        self._tokenizer = Tokenizer.from_str(tok.to_str())
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def count(self, text: str) -> int:
        """Tokens in ``text``."""
        if not text:
            return 0
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

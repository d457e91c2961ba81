"""The token counter's cache: the same counts as encoding afresh, bounded in size."""

from __future__ import annotations

from nmafc.embedding.tokens import TokenCounter

LINES = [
    "- Caroline went to a LGBTQ support group yesterday (7 May 2023).",
    "8 May 2023:",
    "[8 May 2023 · turn 3] Caroline: I went to a LGBTQ support group yesterday …",
    "- Melanie painted a lake sunrise last year.",
    "unbelievably ünïcödé 東京 emoji 🎉",
]


def test_cached_counts_equal_fresh_encodes_even_while_evicting() -> None:
    fresh = TokenCounter(cache_size=0)
    tiny = TokenCounter(cache_size=2)  # every third distinct line evicts one
    expected = [fresh.count(line) for line in LINES]
    for _ in range(3):
        assert [tiny.count(line) for line in LINES] == expected
    assert tiny._cached.cache_info().currsize == 2


def test_repeated_lines_are_served_from_the_cache() -> None:
    counter = TokenCounter()
    first = [counter.count(line) for line in LINES]
    assert [counter.count(line) for line in LINES] == first
    assert counter._cached.cache_info().hits == len(LINES)


def test_long_texts_are_counted_exactly_but_not_cached() -> None:
    counter = TokenCounter()
    context = "\n".join(LINES * 40)
    assert counter.count(context) == TokenCounter(cache_size=0).count(context)
    assert counter.count("word " * 1000) == 1000
    assert counter._cached.cache_info().currsize == 0

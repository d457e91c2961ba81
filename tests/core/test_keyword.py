"""Terms as the Cold ROM's FTS5 (porter unicode61) indexes them, computed in Python."""

from __future__ import annotations

from nmafc.core.keyword import index_term, index_terms


def test_numbers_are_indexed_as_written_without_filling_the_stemming_cache() -> None:
    index_term.cache_clear()
    terms, length = index_terms("Note 51017 was filed in 2023 by Melanie")
    assert terms == ["note", "51017", "file", "2023", "melani"]
    assert length == 8
    assert index_term.cache_info().currsize == 3  # note, filed, Melanie
    assert [index_term(n) for n in ("51017", "2023", "007")] == ["51017", "2023", "007"]

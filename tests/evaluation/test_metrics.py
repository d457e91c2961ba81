"""Metrics pinned on hand-computed examples."""

from __future__ import annotations

import math

import pytest

from nmafc.core.text import stem
from nmafc.evaluation.bm25 import BM25, terms
from nmafc.evaluation.metrics import (
    answer_reachable,
    answer_tokens,
    dedupe,
    discordant,
    evidence_recall,
    full_evidence_hit,
    mcnemar_exact,
    mean,
    normalise,
    percentile,
    recall_all_at,
    recall_any_at,
    recall_at,
)


def test_normalise_lowercases_splits_punctuation_and_drops_articles() -> None:
    assert normalise("The C.S. Lewis, a Writer!") == ["c", "s", "lewis", "writer"]
    assert normalise(2022) == ["2022"]
    assert normalise("An apple-pie") == ["apple", "pie"]


def test_answer_tokens_drop_stopwords_and_repeats() -> None:
    assert answer_tokens("She went to the beach and the beach") == ["went", "beach"]
    assert answer_tokens("No") == []
    assert answer_tokens(3) == ["3"]


def test_answer_reachable_needs_every_token_as_a_whole_word() -> None:
    context = "[8 May 2023] Caroline: I went to a support group on 7 May, 2023!"
    assert answer_reachable("7 May 2023", context) is True
    assert answer_reachable("17 May 2023", context) is False  # '17' is not the word '7'
    assert answer_reachable("support groups", context) is False  # no stemming
    assert answer_reachable("Swede", "She lived in Sweden") is False
    assert answer_reachable(2023, context) is True
    assert answer_reachable("C. S. Lewis", "books by C.S. Lewis") is True


def test_answer_reachable_is_undefined_without_content_words() -> None:
    assert answer_reachable("No", "no, never") is None
    assert answer_reachable("", "anything") is None


def test_evidence_recall_and_full_hit() -> None:
    evidence = ["D1:1", "D1:2", "D2:3"]
    assert evidence_recall(evidence, ["D1:2", "D9:9"]) == pytest.approx(1 / 3)
    assert full_evidence_hit(evidence, ["D1:2", "D9:9"]) is False
    assert evidence_recall(evidence, ["D2:3", "D1:1", "D1:2"]) == 1.0
    assert full_evidence_hit(evidence, ["D2:3", "D1:1", "D1:2", "D5:5"]) is True
    assert evidence_recall([], ["D1:1"]) is None
    assert full_evidence_hit([], ["D1:1"]) is None


def test_rank_metrics() -> None:
    ranked = ["s3", "s1", "s7", "s2", "s9", "s4"]
    assert recall_any_at(ranked, ["s4", "s9"], 5) is True
    assert recall_all_at(ranked, ["s4", "s9"], 5) is False
    assert recall_all_at(ranked, ["s4", "s9"], 6) is True
    assert recall_any_at(ranked, ["s4"], 5) is False
    assert recall_at(ranked, ["s1", "s4", "s8"], 5) == pytest.approx(1 / 3)
    assert recall_any_at(ranked, [], 5) is None
    assert recall_at(ranked, [], 10) is None


def test_mean_percentile_dedupe() -> None:
    assert mean([True, False, None, 1.0]) == pytest.approx(2 / 3)
    assert mean([None]) is None
    assert percentile([3.0, 1.0, 2.0, 4.0], 50) == 2.5
    assert percentile([float(v) for v in range(1, 21)], 95) == pytest.approx(19.05)
    assert percentile([10.0, 20.0, 40.0], 99) == pytest.approx(39.6)
    assert percentile([], 50) is None
    assert dedupe(["b", "a", "b", "c", "a"]) == ["b", "a", "c"]


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [
        (0, 0, 1.0),
        (1, 0, 1.0),  # 2 · ½ = 1
        (0, 5, 0.0625),  # 2 · 1/32
        (3, 3, 1.0),  # 2 · 42/64 capped at 1
        (10, 2, 0.03857421875),  # 2 · (1 + 12 + 66) / 4096
        (7, 23, 5608024 / 1073741824),  # 2 · Σ_{i≤7} C(30, i) / 2^30
        (23, 7, 0.005222879350185395),  # symmetric; equals scipy's binomtest
    ],
)
def test_mcnemar_exact_p_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p, rel=1e-12)


def test_discordant_counts_each_direction_and_skips_undefined() -> None:
    first = [True, True, False, None, False, True]
    second = [False, True, True, True, False, False]
    assert discordant(first, second) == (2, 1)


def test_bm25_terms_are_stemmed_content_words_with_repeats() -> None:
    expected = [stem(w) for w in ("caroline", "running", "races", "dogs", "dogs")]
    assert terms("Caroline's running races and the dogs, dogs!") == expected


def test_bm25_scores_match_the_okapi_formula() -> None:
    index = BM25([["apple"], ["banana", "banana"], ["apple", "cherry", "cherry", "cherry"]])
    # N = 3, avgdl = 7/3, df(apple) = 2 → idf = ln(1 + 1.5/2.5) = ln 1.6.
    norm = 1.2 * (0.25 + 0.75 * 1 / (7 / 3))
    assert index.score(["apple"], 0) == pytest.approx(math.log(1.6) * 2.2 / (1 + norm))
    norm_long = 1.2 * (0.25 + 0.75 * 4 / (7 / 3))
    assert index.score(["apple"], 2) == pytest.approx(math.log(1.6) * 2.2 / (1 + norm_long))
    assert [i for i, _ in index.rank(["apple"])] == [0, 2]  # the shorter document first
    assert [i for i, _ in index.rank(["banana", "kiwi"])] == [1]
    assert index.rank(["kiwi"]) == []

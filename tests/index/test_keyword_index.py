"""The RAM keyword index tokenizes and ranks exactly as SQLite's FTS5 does."""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest

from nmafc.core.keyword import idf, index_terms, tie_key
from nmafc.index.keyword_index import KeywordIndex, tie_keys

DOCUMENTS = [
    ("caroline_support_group", "Caroline joined an LGBTQ support group in May"),
    ("melanie_pottery", "Melanie signed up for pottery classes, she loves pottery"),
    ("jon_running", "Jon is running a marathon; running keeps him calm"),
    ("caroline_adoption", "Caroline's adoption agency interviews went well"),
    ("gina_cafe", "Gina opened a café near the station in 2022"),
    ("melanie_camping", "Melanie went camping with her kids at the lake"),
    ("tomas_pottery_fair", "Tomas sold bowls at the pottery fair"),
    ("lee_allergy", "Lee is allergic to peanuts"),
]


def _fts(documents: list[tuple[str, str]]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(entity, content, tokenize='porter unicode61')")
    db.executemany(
        "INSERT INTO docs(rowid, entity, content) VALUES (?, ?, ?)",
        [(row, entity, content) for row, (entity, content) in enumerate(documents)],
    )
    return db


def _fts_ranking(
    db: sqlite3.Connection, query_terms: list[str], limit: int
) -> list[tuple[int, float]]:
    """FTS5's ``(rowid, score)`` for the terms, best first, weighted as the Cold search is."""
    phrases = " OR ".join(f'"{t}"' for t in query_terms)
    return db.execute(
        "SELECT rowid, -bm25(docs, 0.5, 1.0) AS s FROM docs WHERE docs MATCH ? "
        "ORDER BY s DESC, rowid LIMIT ?",
        (f"{{entity content}} : ({phrases})", limit),
    ).fetchall()


def _weights(index: KeywordIndex, query_terms: list[str]) -> dict[str, float]:
    return {_stem(t): idf(len(index), index.frequency(_stem(t))) for t in query_terms}


def _stem(word: str) -> str:
    return index_terms(word)[0][0]


def _index(documents: list[tuple[str, str]]) -> KeywordIndex:
    index = KeywordIndex()
    for row, (entity, content) in enumerate(documents):
        index.put(row, entity, content, tie=row)
    return index


@pytest.mark.parametrize(
    "text",
    [
        "Melanie signed up for pottery classes",
        "caroline_support_group",
        "Running marathons generously, 2022!",
        "Gina's café serves crêpes",
        "well-known LGBTQ activists",
    ],
)
def test_terms_and_length_are_those_fts5_indexes(text: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(x, tokenize='porter unicode61')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t(x) VALUES (?)", (text,))
    fts_tokens = [term for (term,) in db.execute("SELECT term FROM v ORDER BY offset")]

    terms, length = index_terms(text)

    assert length == len(fts_tokens)
    # Single letters (the "s" of "Gina's") and stop words are never searched for.
    assert terms == [t for t in fts_tokens if len(t) > 1 and t not in {"for", "up"}]


@pytest.mark.parametrize(
    "query_terms",
    [["pottery"], ["caroline", "support"], ["running", "calm"], ["cafe"], ["allergic", "lake"]],
)
def test_scores_equal_fts5_bm25_with_the_cold_column_weights(query_terms: list[str]) -> None:
    expected = _fts_ranking(_fts(DOCUMENTS), query_terms, limit=10)
    index = _index(DOCUMENTS)

    rows, scores = index.top(
        _weights(index, query_terms), index.total_length / len(index), limit=10
    )

    assert expected, "the query should match something"
    assert [int(r) for r in rows] == [row for row, _ in expected]
    assert [float(s) for s in scores] == pytest.approx([s for _, s in expected], rel=1e-9)


def test_a_large_corpus_of_tied_documents_ranks_as_fts5_does() -> None:
    # Few words and short texts: thousands of documents share each score, so the cut at
    # the limit and the order within ties are both exercised.
    rng = random.Random(7)
    words = ["pottery", "camping", "marathon", "lake", "adoption", "cafe", "peanuts", "dog"]
    documents = [
        (rng.choice(words), " ".join(rng.choice(words) for _ in range(rng.randint(1, 6))))
        for _ in range(5_000)
    ]
    db, index = _fts(documents), _index(documents)
    for _ in range(20):
        query_terms = rng.sample(words, rng.randint(1, 3))
        expected = _fts_ranking(db, query_terms, limit=30)

        rows, scores = index.top(
            _weights(index, query_terms), index.total_length / len(index), limit=30
        )

        assert [int(r) for r in rows] == [row for row, _ in expected]
        assert [float(s) for s in scores] == pytest.approx([s for _, s in expected], rel=1e-12)


def test_reindexing_and_removal_keep_the_statistics_exact() -> None:
    index = _index(DOCUMENTS)
    fresh = _index([DOCUMENTS[0], ("lee_allergy", "Lee now tolerates peanuts"), DOCUMENTS[2]])

    index.put(1, "lee_allergy", "Lee now tolerates peanuts", tie=1)
    for row in range(3, len(DOCUMENTS)):
        index.remove(row)
    index.remove(99)  # an unknown row is not an error

    assert len(index) == len(fresh) == 3
    assert index.total_length == fresh.total_length
    assert index.postings == fresh.postings
    for word in ("pottery", "peanuts", "tolerates", "Caroline", "allergic"):
        assert index.frequency(_stem(word)) == fresh.frequency(_stem(word))
    rows, _ = index.top({_stem("pottery"): 1.0, _stem("peanuts"): 1.0}, 5.0, limit=10)
    assert [int(r) for r in rows] == [1]


def test_equal_scores_are_ordered_by_tie_key_not_by_row() -> None:
    index = KeywordIndex()
    for row, tie in enumerate([30, 10, 20, 0]):
        index.put(row, "note", "pottery class", tie=tie)

    rows, scores = index.top({_stem("pottery"): 1.0}, 3.0, limit=3)

    assert len(set(scores.tolist())) == 1
    assert [int(r) for r in rows] == [3, 1, 2]


@pytest.mark.parametrize("seed", range(20))
def test_the_cut_through_many_ties_keeps_what_a_full_sort_would(seed: int) -> None:
    rng = random.Random(seed)
    words = ["lee", "camp", "hike", "paint"]
    index, ties = KeywordIndex(), [rng.randint(0, 40) for _ in range(2_000)]  # keys repeat
    for row, tie in enumerate(ties):
        index.put(row, "", " ".join(rng.choices(words, k=rng.randint(1, 3))), tie=tie)
    weights = {w: rng.uniform(0.1, 1.0) for w in rng.sample(words, rng.randint(1, 3))}
    average = index.total_length / len(index)
    limit = rng.randint(1, 60)

    rows, scores = index.top(weights, average, limit)

    everything, all_scores = index.top(weights, average, 10_000)  # no cut: every match
    ranked = sorted(
        zip(everything.tolist(), all_scores.tolist(), strict=True),
        key=lambda hit: (-hit[1], ties[hit[0]], hit[0]),
    )
    assert rows.tolist() == [row for row, _ in ranked[:limit]]
    assert scores.tolist() == [score for _, score in ranked[:limit]]


def test_limit_keeps_the_best_and_no_match_is_empty() -> None:
    index = _index(DOCUMENTS)
    weights = {_stem("pottery"): 2.0, _stem("Caroline"): 1.0}

    best_two, _ = index.top(weights, index.total_length / len(index), limit=2)
    everything, _ = index.top(weights, index.total_length / len(index), limit=100)

    assert [int(r) for r in best_two] == [int(r) for r in everything[:2]]
    assert len(everything) == 4  # two pottery documents, two of Caroline's
    assert len(index.top({"zebra": 1.0}, 5.0, limit=5)[0]) == 0


def test_a_term_looked_up_before_a_change_is_scored_afresh_after_it() -> None:
    index = _index(DOCUMENTS)
    pottery = {_stem("pottery"): 1.0}
    before, _ = index.top(pottery, 5.0, limit=10)

    index.put(len(DOCUMENTS), "new_hobby", "Jon took up pottery", tie=99)
    index.remove(int(before[0]))
    after, _ = index.top(pottery, 5.0, limit=10)

    assert len(DOCUMENTS) in after.tolist()
    assert int(before[0]) not in after.tolist()
    fresh = _index(DOCUMENTS)
    fresh.put(len(DOCUMENTS), "new_hobby", "Jon took up pottery", tie=99)
    fresh.remove(int(before[0]))
    expected, _ = fresh.top(pottery, 5.0, limit=10)
    assert after.tolist() == expected.tolist()


def test_a_new_average_length_rescores_a_term_looked_up_before() -> None:
    pottery = {_stem("pottery"): 1.0}
    index = _index(DOCUMENTS)
    index.top(pottery, 5.0, limit=10)

    _, rescored = index.top(pottery, 9.0, limit=10)

    _, fresh = _index(DOCUMENTS).top(pottery, 9.0, limit=10)
    assert rescored.tolist() == fresh.tolist()
    assert rescored.tolist() != index.top(pottery, 5.0, limit=10)[1].tolist()


def _corpus(rng: random.Random, n: int) -> list[tuple[str, str]]:
    words = ["Lee", "camping", "campers", "hike", "the", "a", "2022", "café", "Paint", "x"]
    entities = ["lee", "lee_hike", "gina_cafe", ""]
    return [
        (rng.choice(entities), " ".join(rng.choices(words, k=rng.randint(0, 6)))) for _ in range(n)
    ]


def _same(loaded: KeywordIndex, built: KeywordIndex, rng: random.Random) -> None:
    assert len(loaded) == len(built)
    assert loaded.total_length == built.total_length
    assert loaded.postings == built.postings
    terms = ["lee", "camp", "hike", "2022", "cafe", "paint", "gina", "zebra"]
    assert [loaded.frequency(t) for t in terms] == [built.frequency(t) for t in terms]
    for _ in range(10):
        weights = {t: rng.uniform(0.1, 2.0) for t in rng.sample(terms, rng.randint(1, 4))}
        average = rng.uniform(2.0, 6.0)
        limit = rng.randint(1, 80)
        got, want = loaded.top(weights, average, limit), built.top(weights, average, limit)
        assert got[0].tolist() == want[0].tolist()
        assert got[1].tolist() == want[1].tolist()


@pytest.mark.parametrize("seed", range(5))
def test_a_loaded_index_counts_and_ranks_as_one_built_document_by_document(seed: int) -> None:
    rng = random.Random(seed)
    documents = _corpus(rng, 300)
    rows = rng.sample(range(400), len(documents))  # rows need not be 0..n-1 nor in order
    ties = [rng.randint(0, 30) for _ in documents]
    loaded, built = KeywordIndex(), KeywordIndex()
    loaded.load(rows, [e for e, _ in documents], [c for _, c in documents], ties)
    for row, (entity, content), tie in zip(rows, documents, ties, strict=True):
        built.put(row, entity, content, tie)
    _same(loaded, built, rng)

    # Then the changes a working set makes (removals, re-indexing, new rows), to terms
    # both indexes have looked up already.
    for _ in range(200):
        row = rng.choice(rows) if rng.random() < 0.8 else rng.randint(400, 450)
        if rng.random() < 0.4:
            loaded.remove(row)
            built.remove(row)
        else:
            entity, content = _corpus(rng, 1)[0]
            tie = rng.randint(0, 30)
            loaded.put(row, entity, content, tie)
            built.put(row, entity, content, tie)
    _same(loaded, built, rng)


def test_a_load_fills_only_an_empty_index_and_takes_each_row_once() -> None:
    index = KeywordIndex()
    with pytest.raises(ValueError, match="each row once"):
        index.load([0, 0], ["lee", "lee"], ["hike", "paint"], [0, 1])
    assert len(index) == 0
    assert index.postings == 0
    index.load([0, 1], ["lee", "lee"], ["hike", "paint"], [0, 1])
    with pytest.raises(ValueError, match="empty index"):
        index.load([2], ["lee"], ["camp"], [2])
    assert len(index) == 2


def test_a_loaded_index_holds_a_posting_in_a_fraction_of_a_dict_entry() -> None:
    documents = _corpus(random.Random(7), 2_000)
    rows = list(range(len(documents)))
    loaded, built = KeywordIndex(), KeywordIndex()
    loaded.load(rows, [e for e, _ in documents], [c for _, c in documents], rows)
    for row, (entity, content) in enumerate(documents):
        built.put(row, entity, content, row)
    assert loaded.postings == built.postings > 0
    assert loaded.nbytes < built.nbytes / 3


def test_tie_keys_of_many_ids_are_each_id_s_tie_key() -> None:
    ids = ["r1", "", "Zoë", "9b2f6c1e-0d1f-4c59-9a57-7bd1c2a1f3e0", "r1"]
    keys = tie_keys(ids)
    assert keys.dtype == np.int64
    assert keys.tolist() == [tie_key(rid) for rid in ids]
    assert tie_keys([]).tolist() == []

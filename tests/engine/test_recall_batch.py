"""Concurrent recalls share query embedding and scans, and get what they would alone."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from nmafc.core.scope import Scope
from nmafc.embedding.base import Embedder, Vectors
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions, RecallResult
from nmafc.engine.recall_batch import RecallBatching, Scan, scan_batch
from nmafc.index.working_set import Update, WorkingSet
from nmafc.settings import Settings
from tests.conftest import _Shared
from tests.core.factories import record

from .helpers import say

READ = RecallOptions(reinforce=False, budget_tokens=300)
QUESTIONS = [
    "What is Caroline allergic to?",
    "Who paints landscapes?",
    "Where did they go hiking?",
    "What instrument does Melanie play?",
    "Which city did Caroline move to?",
    "What is the dog called?",
]


class GatedEmbedder(_Shared):
    """The real embedder, whose next call can be held until the test lets it go."""

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner)
        self.calls: list[list[str]] = []
        self.held = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        if not self.release.is_set():
            self.held.set()
            assert self.release.wait(30)
        return super().embed(texts)


def _same(a: RecallResult, b: RecallResult) -> None:
    assert [h.id for h in a.hits] == [h.id for h in b.hits]
    assert [h.score for h in a.hits] == pytest.approx([h.score for h in b.hits], abs=1e-6)
    assert a.context == b.context


def test_concurrent_recalls_batch_their_queries_and_match_lone_recalls(
    settings: Settings, shared_embedder: Embedder, scope: Scope
) -> None:
    gated = GatedEmbedder(shared_embedder)
    engine = MemoryEngine.open(settings, embedder=gated)
    try:
        engine.remember(
            scope,
            [
                say("I'm allergic to shellfish."),
                say("My sister Melanie paints landscapes."),
                say("We went hiking in the Alps last summer."),
                say("Melanie plays the violin every evening.", "Melanie"),
                say("Caroline moved to Lisbon in March."),
                say("Our dog is called Oscar."),
            ],
        )
        assert engine.ctx.batching.searches.calls == 0  # ingestion embeds on its own
        alone = [engine.recall(scope, q, READ) for q in QUESTIONS]

        gated.release.clear()
        queue = engine.ctx.batching.searches
        with ThreadPoolExecutor(max_workers=len(QUESTIONS)) as pool:
            first = pool.submit(engine.recall, scope, QUESTIONS[0], READ)
            assert gated.held.wait(30)
            rest = [pool.submit(engine.recall, scope, q, READ) for q in QUESTIONS[1:]]
            deadline = time.monotonic() + 30
            while queue.pending < len(QUESTIONS) - 1:
                assert time.monotonic() < deadline
                time.sleep(0.001)
            gated.release.set()
            together = [first.result(30), *(f.result(30) for f in rest)]
    finally:
        engine.close()
    assert sorted(QUESTIONS[1:]) in [sorted(c) for c in gated.calls]  # one batch of five
    for a, b in zip(alone, together, strict=True):
        _same(a, b)


def _filled(name: str, n: int, dim: int, rng: np.random.Generator) -> WorkingSet:
    working = WorkingSet(Scope("a", name), scope_pk=1, dim=dim)
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    working.apply([Update(record(id=f"{name}{i}"), v) for i, v in enumerate(vectors)], [], 1)
    return working


def test_questions_are_embedded_in_the_batch_that_scans_them_and_a_bad_scan_fails_alone(
    shared_embedder: Embedder,
) -> None:
    rng = np.random.default_rng(5)
    good = _filled("good", 50, shared_embedder.dim, rng)
    other_model = _filled("other", 50, 8, rng)  # vectors of another dimension
    gated = GatedEmbedder(shared_embedder)
    batching = RecallBatching(gated, max_batch=8)
    gated.release.clear()
    with ThreadPoolExecutor(max_workers=3) as pool:
        first = pool.submit(batching.search, "Who paints?", [good], 3)
        assert gated.held.wait(30)
        bad = pool.submit(batching.search, "Who sings?", [other_model], 3)
        fine = pool.submit(batching.search, "Who dances?", [good], 3)
        deadline = time.monotonic() + 30
        while batching.searches.pending < 2:
            assert time.monotonic() < deadline
            time.sleep(0.001)
        gated.release.set()
        first.result(30)
        vector, hits = fine.result(30)
        with pytest.raises(ValueError, match="queries must be"):
            bad.result(30)

    assert gated.calls == [["Who paints?"], ["Who sings?", "Who dances?"]]
    assert [rid for rid, _ in hits[0]] == [
        rid for rid, _ in good.search_many(vector[None, :], 3)[0]
    ]
    assert np.allclose(vector, shared_embedder.embed(["Who dances?"])[0], atol=1e-6)
    # No hits wanted: the question is embedded, and no set is scanned, not even a bad one.
    _, unscanned = batching.search("Who paints?", [good, other_model], 0)
    batching.close()
    assert unscanned == [[], []]


def test_a_scan_batch_searches_each_set_once_per_limit_and_matches_each_set_alone() -> None:
    rng = np.random.default_rng(4)

    a, b = _filled("a", 40, 8, rng), _filled("b", 25, 8, rng)
    empty = WorkingSet(Scope("a", "e"), 1, 8)
    queries = rng.standard_normal((4, 8)).astype(np.float32)
    scans = [
        Scan((a, b), queries[0], 5),
        Scan((b,), queries[1], 5),
        Scan((a, empty, b), queries[2], 30),
        Scan((a,), queries[3], 5),
    ]
    found = scan_batch(scans)
    for scan, per_set in zip(scans, found, strict=True):
        assert len(per_set) == len(scan.sets)
        for working, hits in zip(scan.sets, per_set, strict=True):
            expected = working.search_many(scan.query[None, :], scan.limit)[0]
            assert [rid for rid, _ in hits] == [rid for rid, _ in expected]
            assert [s for _, s in hits] == pytest.approx([s for _, s in expected], abs=1e-6)

"""The working-set cache as a cache: loaded once, in the background when large, bounded."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.settings import Settings

from .helpers import say

FRUITS = ("apples", "pears", "plums", "cherries", "figs", "quinces", "apricots", "medlars")
QUIET = RecallOptions(reinforce=False)


def _with_hot(settings: Settings, **changes: object) -> Settings:
    return settings.model_copy(update={"hot": settings.hot.model_copy(update=changes)})


def _until(condition: object, timeout_s: float = 20.0) -> bool:
    ends = time.monotonic() + timeout_s
    while time.monotonic() < ends:
        if callable(condition) and condition():
            return True
        time.sleep(0.02)
    return False


def _cold(engine: MemoryEngine) -> None:
    """RAM as after a restart: no working set or archive cached."""
    engine.ctx.hot.cache.drop()
    engine.ctx.archive.cache.drop()


@pytest.mark.parametrize("inline_max", [2000, 0], ids=["inline", "background"])
def test_concurrent_first_recalls_of_a_scope_load_it_once_and_agree(
    settings: Settings, shared_embedder: object, scope: Scope, inline_max: int
) -> None:
    # In the background too: the searches that arrive meanwhile start no second load.
    engine = MemoryEngine.open(
        _with_hot(settings, cache_inline_load_max_records=inline_max),
        embedder=shared_embedder,  # type: ignore[arg-type]
    )
    try:
        engine.remember(
            scope, [say(f"My neighbour grows {fruit} by the wall.") for fruit in FRUITS]
        )
        _cold(engine)
        loads = engine.ctx.hot.loads
        start = threading.Barrier(8)

        def recall(_: int) -> tuple[str, list[str]]:
            start.wait()
            found = engine.recall(scope, "What does my neighbour grow?", QUIET)
            return found.context, [hit.id for hit in found.hits]

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(recall, range(8)))
        assert _until(lambda: engine.ctx.hot.loads == loads + 1)
        time.sleep(0.2)  # no second load finishing late
        assert engine.ctx.hot.loads == loads + 1
        assert all("plums" in context for context, _ in results)
        if inline_max:  # all waited for the one load, and searched the same set
            assert all(result == results[0] for result in results)
        # In the background a recall that reaches the scope once the load is done (a slow
        # thread) searches RAM while the others searched the stores: equal is not due.
    finally:
        engine.close()


def test_a_first_recall_of_a_large_uncached_scope_is_served_by_the_stores_while_it_loads(
    settings: Settings, shared_embedder: object, scope: Scope
) -> None:
    engine = MemoryEngine.open(
        _with_hot(settings, cache_inline_load_max_records=0),
        embedder=shared_embedder,  # type: ignore[arg-type]
    )
    try:
        engine.remember(scope, [say("I keep bees on the roof."), say("My car is red.")])
        _cold(engine)
        hot, archive = engine.ctx.hot, engine.ctx.archive
        loads, archive_loads = hot.loads, archive.loads

        first = engine.recall(scope, "Where are the bees?", QUIET)
        assert hot.loads == loads  # answered without waiting for the load
        assert "bees on the roof" in first.context
        assert "bees" in first.hits[0].content

        row = engine.ctx.row(scope)
        assert row is not None
        assert _until(lambda: hot.cached(row) is not None)
        assert hot.loads == loads + 1
        assert _until(lambda: archive.loads == archive_loads + 1)

        second = engine.recall(scope, "Where are the bees?", QUIET)
        assert hot.loads == loads + 1  # served from RAM
        assert archive.loads == archive_loads + 1
        assert "bees on the roof" in second.context
        assert second.hits[0].id == first.hits[0].id
    finally:
        engine.close()


def test_small_scopes_still_load_inline_by_default(engine: MemoryEngine, scope: Scope) -> None:
    engine.remember(scope, [say("I keep bees on the roof.")])
    _cold(engine)
    loads = engine.ctx.hot.loads
    assert "bees on the roof" in engine.recall(scope, "Where are the bees?", QUIET).context
    assert engine.ctx.hot.loads == loads + 1  # loaded before the answer, as before


def test_a_stale_cached_set_is_caught_up_inline_not_reloaded(
    settings: Settings, shared_embedder: object, scope: Scope
) -> None:
    background = _with_hot(settings, cache_inline_load_max_records=0)
    engine = MemoryEngine.open(background, embedder=shared_embedder)  # type: ignore[arg-type]
    other = MemoryEngine.open(background, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        engine.remember(scope, [say("I keep bees on the roof.")])
        _cold(engine)
        engine.recall(scope, "bees", QUIET)  # loads it in the background
        assert _until(lambda: engine.ctx.hot.loads == 1)
        other.remember(scope, [say("The hive faces south.")])  # another replica writes
        found = engine.recall(scope, "Which way does the hive face?", QUIET)
        assert "faces south" in found.context  # the log after the set, read inline
        assert engine.ctx.hot.loads == 1
    finally:
        other.close()
        engine.close()


def test_a_scope_s_first_write_begins_its_sets_so_its_first_recall_loads_nothing(
    engine: MemoryEngine, scope: Scope
) -> None:
    hot, archive = engine.ctx.hot, engine.ctx.archive
    engine.remember(scope, [say("I keep bees on the roof.")])
    engine.remember(scope, [say("Actually, I moved the bees to the garden.")])
    loads = (hot.loads, archive.loads)
    found = engine.recall(scope, "Where are the bees?", QUIET)
    assert "garden" in found.context
    assert (hot.loads, archive.loads) == loads  # both followed the writes: nothing read
    row = engine.ctx.row(scope)
    assert row is not None
    assert hot.cached(row)
    assert archive.cached(row) is not None


def test_closing_the_engine_during_a_background_load_neither_hangs_nor_raises(
    settings: Settings, shared_embedder: object, scope: Scope
) -> None:
    engine = MemoryEngine.open(
        _with_hot(settings, cache_inline_load_max_records=0),
        embedder=shared_embedder,  # type: ignore[arg-type]
    )
    engine.remember(scope, [say(f"Note {i}: my neighbour grows {f}.") for i, f in
                            enumerate(FRUITS)])  # fmt: skip
    _cold(engine)
    engine.recall(scope, "What does my neighbour grow?", QUIET)  # a load starts
    began = time.monotonic()
    engine.close()
    assert time.monotonic() - began < 10.0


def _drafts(prefix: str, n: int, seed: int) -> list[FactDraft]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return [
        FactDraft(content=f"{prefix} fact number {i}", entity=f"{prefix}{i}", vector=vectors[i])
        for i in range(n)
    ]


def _engine_with_a_1_mb_cache(settings: Settings, embedder: object) -> MemoryEngine:
    """Room for two working sets of 350 ``_drafts``, not three."""
    return MemoryEngine.open(
        _with_hot(settings, cache_max_mb=1, preload_scopes=0),
        embedder=embedder,  # type: ignore[arg-type]
    )


def _held(engine: MemoryEngine, scopes: tuple[Scope, ...]) -> set[Scope]:
    rows = {s: engine.ctx.row(s) for s in scopes}
    return {s for s, row in rows.items() if row is not None and engine.ctx.hot.cached(row)}


def test_the_cache_stays_within_its_bytes_and_evicts_the_least_recently_used_scope(
    settings: Settings, shared_embedder: object
) -> None:
    engine = _engine_with_a_1_mb_cache(settings, shared_embedder)
    a, b, c = (Scope("agent-lru", name) for name in ("a", "b", "c"))
    try:
        for i, s in enumerate((a, b, c)):
            engine.ingest(s, _drafts(s.conversation_id, 350, seed=i))
        _cold(engine)
        cache = engine.ctx.hot.cache
        engine.recall(a, "a fact", QUIET)
        size = cache.nbytes()  # one scope's working set
        assert 2 * size <= cache.max_bytes < 3 * size, "three sets must not fit, two must"
        engine.recall(b, "b fact", QUIET)
        engine.recall(a, "a fact", QUIET)  # a used again: b is now the oldest
        engine.recall(c, "c fact", QUIET)
        assert _held(engine, (a, b, c)) == {a, c}
        assert cache.nbytes() <= cache.max_bytes
    finally:
        engine.close()


def test_a_scope_written_into_a_full_cache_does_not_evict_a_searched_one(
    settings: Settings, shared_embedder: object
) -> None:
    engine = _engine_with_a_1_mb_cache(settings, shared_embedder)
    a, b, c = (Scope("agent-offer", name) for name in ("a", "b", "c"))
    try:
        for i, s in enumerate((a, b)):
            engine.ingest(s, _drafts(s.conversation_id, 350, seed=i))
        _cold(engine)
        engine.recall(a, "a fact", QUIET)
        engine.recall(b, "b fact", QUIET)  # two searched scopes fill the cache
        engine.ingest(c, _drafts("c", 350, seed=2))  # a new scope's first write
        assert _held(engine, (a, b, c)) == {a, b}
        assert "c fact number 7" in engine.recall(c, "c fact number 7", QUIET).context
    finally:
        engine.close()

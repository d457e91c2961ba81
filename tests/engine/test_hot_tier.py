"""Hot follows the log: written after each commit, reinforcement folded into the next write."""

from __future__ import annotations

import gc
import shutil
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from sqlalchemy import update

from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.errors import StoreUnavailable
from nmafc.settings import Settings
from nmafc.storage.cold.schema import facts
from nmafc.storage.hot.rows import scope_filter

from .helpers import hot_state, let_turns_pass, log_state, say


def test_reinforcement_updates_ram_now_and_lancedb_with_the_next_write(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("I keep bees."), say("The hive is on the roof.")])
    version = engine.ctx.hot.store._table.version
    result = engine.recall(scope, "bees", RecallOptions())
    assert result.reinforced > 0
    assert engine.ctx.hot.store._table.version == version  # no LanceDB commit per read
    assert engine.working_set(scope) == log_state(engine, scope)  # RAM is current
    assert scope in engine.ctx.hot.lagging()
    engine.remember(scope, [say("I sold some honey.")])
    assert engine.ctx.hot.store._table.version == version + 1  # one commit carries both
    assert hot_state(engine, scope) == log_state(engine, scope)
    assert engine.ctx.hot.lagging() == []


def test_a_process_that_dies_before_flushing_is_replayed_on_open(
    settings: Settings, shared_embedder: object
) -> None:
    scope = Scope("agent-lag", "c1")
    first = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    first.remember(scope, [say("I keep bees.")])
    first.recall(scope, "bees", RecallOptions())
    assert hot_state(first, scope) != log_state(first, scope)
    # Simulate a crash: drop the engine without close() (which would flush).
    first.ctx.cold.close()
    second = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        assert hot_state(second, scope) == log_state(second, scope)
    finally:
        second.close()


def test_lag_is_bounded(settings: Settings, shared_embedder: object) -> None:
    bounded = settings.model_copy(
        update={"hot": settings.hot.model_copy(update={"max_lag_events": 2})}
    )
    engine = MemoryEngine.open(bounded, embedder=shared_embedder)  # type: ignore[arg-type]
    scope = Scope("agent-bound", "c1")
    try:
        engine.remember(scope, [say("I keep bees.")])
        for _ in range(3):  # a use counts once per turn: let one pass between the recalls
            engine.recall(scope, "bees", RecallOptions())
            let_turns_pass(engine, scope, 1)
        assert engine.stats(scope).events["reinforce"] == 3
        assert hot_state(engine, scope) == log_state(engine, scope)
    finally:
        engine.close()


def test_loading_working_sets_freezes_the_heap_as_configured(
    settings: Settings, shared_embedder: object, scope: Scope
) -> None:
    frozen_each = settings.model_copy(
        update={"hot": settings.hot.model_copy(update={"gc_freeze_every": 1})}
    )
    engine = MemoryEngine.open(frozen_each, embedder=shared_embedder)  # type: ignore[arg-type]
    gc.unfreeze()
    try:
        engine.remember(scope, [say("I keep bees.")])
        engine.ctx.hot.cache.drop()
        engine.recall(scope, "bees", RecallOptions())  # loads the working set again
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        engine.close()


def test_concurrent_first_recalls_of_a_scope_load_it_once(
    engine: MemoryEngine, scope: Scope
) -> None:
    # A restart under load: every client's first recall finds the scope not yet in RAM.
    engine.remember(scope, [say(f"Note {i} about the garden.") for i in range(300)])
    engine.ctx.hot.cache.drop()
    engine.ctx.archive.cache.drop()
    loads, archive_loads = engine.ctx.hot.loads, engine.ctx.archive.loads
    start = threading.Barrier(8)

    def recall(_: int) -> int:
        start.wait()
        return len(engine.recall(scope, "garden", RecallOptions(reinforce=False)).hits)

    with ThreadPoolExecutor(max_workers=8) as pool:
        found = list(pool.map(recall, range(8)))
    assert all(found)
    assert engine.ctx.hot.loads == loads + 1
    assert engine.ctx.archive.loads == archive_loads + 1


def test_with_the_cache_off_a_recall_searches_the_stores_and_loads_nothing(
    settings: Settings, shared_embedder: object, scope: Scope
) -> None:
    off = settings.model_copy(update={"hot": settings.hot.model_copy(update={"cache_max_mb": 0})})
    engine = MemoryEngine.open(off, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        engine.remember(scope, [say("I keep bees on the roof."), say("My car is red.")])
        for _ in range(3):
            found = engine.recall(scope, "Where are the bees?", RecallOptions(reinforce=False))
            assert "bees" in found.hits[0].content
            assert "bees on the roof" in found.context
        assert engine.ctx.hot.loads == 0
        assert engine.ctx.archive.loads == 0
        assert engine.ctx.hot.cache.nbytes() == 0
    finally:
        engine.close()


def test_preloading_loads_the_most_recently_written_scopes_first(
    settings: Settings, shared_embedder: object
) -> None:
    oldest, older, newest = (Scope("agent-p", c) for c in ("c1", "c2", "c3"))
    writer = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    for scope in (oldest, older, newest):
        writer.remember(scope, [say(f"I keep bees in {scope.conversation_id}.")])
    writer.close()
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        assert engine.preload(2) == 2
        assert engine.ctx.hot.loads == 2
        assert engine.ctx.archive.loads == 2
        for scope in (newest, older):  # already in RAM: no load on the first search
            assert engine.recall(scope, "bees", RecallOptions(reinforce=False)).hits
        assert engine.ctx.hot.loads == 2
        engine.recall(oldest, "bees", RecallOptions(reinforce=False))
        assert engine.ctx.hot.loads == 3
    finally:
        engine.close()


def test_preloading_stops_when_asked_and_never_runs_without_a_cache(
    settings: Settings, shared_embedder: object, scope: Scope
) -> None:
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        engine.remember(scope, [say("I keep bees.")])
        engine.ctx.hot.cache.drop()
        stop = threading.Event()
        stop.set()
        assert engine.preload(10, stop) == 0
        assert engine.preload(0) == 0
        assert engine.preload(10) == 1
    finally:
        engine.close()
    off = settings.model_copy(update={"hot": settings.hot.model_copy(update={"cache_max_mb": 0})})
    engine = MemoryEngine.open(off, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        assert engine.preload(10) == 0
        assert engine.ctx.hot.loads == 0
    finally:
        engine.close()


def test_after_a_failed_hot_write_the_caught_up_rows_are_checked_against_the_log(
    engine: MemoryEngine, scope: Scope
) -> None:
    hot = engine.ctx.hot
    engine.remember(scope, [say(f"Note {i} about the garden.") for i in range(5)])
    _break_the_hot_table(engine)
    engine.remember(scope, [say("I keep bees.")])  # acknowledged by the Cold ROM alone
    assert scope in hot.lagging()
    _mend_the_hot_table(engine)
    # Rows lost behind the watermark's back, as an object store that dropped a commit
    # leaves them: the watermark alone cannot tell; the rows checked against the log can.
    hot.store._table.delete(f"{scope_filter(scope)} AND kind = 'fact'")
    engine.remember(scope, [say("The hive is on the roof.")])
    assert hot_state(engine, scope) == log_state(engine, scope)
    assert hot.lagging() == []
    # Checked once: healthy writes after that are not checked again.
    hot.store._table.delete(f"{scope_filter(scope)} AND kind = 'fact'")
    engine.remember(scope, [say("I sold some honey.")])
    assert len(hot_state(engine, scope)) == 1


def test_a_hot_write_that_ends_after_its_scope_was_checked_has_it_checked_again(
    engine: MemoryEngine, scope: Scope
) -> None:
    # A write stuck on S3 may run for minutes past its deadline, then commit. The late end
    # is staged with a Future: LanceDB's calls share one event loop, so a real stuck call
    # would also stall the check that must run before it ends.
    hot = engine.ctx.hot
    engine.remember(scope, [say(f"Note {i} about the garden.") for i in range(5)])
    late: Future[None] = Future()
    hot._behind(scope, StoreUnavailable("The Hot store (S3) did not answer.", running=late))
    engine.flush()  # caught up and checked while the late write still runs
    assert hot.lagging() == []
    hot.store._table.delete(f"{scope_filter(scope)} AND kind = 'fact'")  # what it did
    late.set_result(None)
    assert scope in hot.lagging()
    engine.flush()
    assert hot_state(engine, scope) == log_state(engine, scope)


def _break_the_hot_table(engine: MemoryEngine) -> None:
    """Every Hot write fails from now on, as with S3 down (the table's files are gone)."""
    table = Path(engine.ctx.settings.resolved_hot_uri())
    shutil.move(table, table.with_name("hot.away"))


def _mend_the_hot_table(engine: MemoryEngine) -> None:
    table = Path(engine.ctx.settings.resolved_hot_uri())
    shutil.move(table.with_name("hot.away"), table)


def test_a_scope_that_cannot_be_flushed_does_not_keep_the_others_behind(
    engine: MemoryEngine,
) -> None:
    broken, healthy = Scope("agent-flush", "broken"), Scope("agent-flush", "healthy")
    for scope in (broken, healthy):  # broken first: it is flushed first
        engine.remember(scope, [say("I keep bees.")])
        engine.recall(scope, "bees", RecallOptions())  # deferred reinforcement: lagging
    assert engine.ctx.hot.lagging() == [broken, healthy]
    engine.ctx.hot.cache.drop()
    with engine.ctx.cold.write() as session:  # a record whose vector cannot be found
        session.conn.execute(
            update(facts)
            .where(
                facts.c.agent_id == broken.agent_id,
                facts.c.conversation_id == broken.conversation_id,
            )
            .values(embedding=None)
        )
    assert engine.flush() == 1
    assert hot_state(engine, healthy) == log_state(engine, healthy)
    assert engine.ctx.hot.lagging() == [broken]

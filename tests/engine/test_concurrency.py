"""Writes to one scope are serialised; different scopes proceed in parallel; nothing is lost."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions

from .helpers import assert_consistent, say


def test_parallel_writers_and_readers_lose_nothing(engine: MemoryEngine) -> None:
    scopes = [Scope("agent-par", f"c{i}") for i in range(3)]
    per_writer = 6

    def write(job: tuple[int, Scope]) -> list[int]:
        writer, scope = job
        ids = []
        for i in range(per_writer):
            ids += [t.id for t in engine.remember(scope, [say(f"writer {writer} note {i}")]).turns]
            engine.recall(scope, f"note {i}", RecallOptions(budget_tokens=200))
        return ids

    jobs = [(w, scopes[w % len(scopes)]) for w in range(6)]  # two writers per scope
    with ThreadPoolExecutor(max_workers=6) as pool:
        turn_ids = [t for ids in pool.map(write, jobs) for t in ids]
    assert len(set(turn_ids)) == len(jobs) * per_writer
    for scope in scopes:
        stats = engine.stats(scope)
        assert stats.turns == 2 * per_writer
        assert stats.turn == 2 * per_writer  # turn numbers are contiguous per scope
        assert stats.records["ActiveContext"] == 2 * per_writer
        assert_consistent(engine, scope)

"""Nothing acknowledged is lost: the Cold commit comes first, Hot is replayed from the log."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from nmafc.core.events import EventKind
from nmafc.core.scope import Scope
from nmafc.engine.changes import ChangeSet
from nmafc.engine.engine import MemoryEngine
from nmafc.settings import Settings

from .helpers import assert_consistent, hot_state, log_state, say

ROOT = Path(__file__).resolve().parents[2]


def test_sigkill_mid_ingest_loses_no_acknowledged_write(
    settings: Settings, shared_embedder: object, tmp_path: Path
) -> None:
    scope = Scope("durable", "c1")
    acked: dict[int, int] = {}
    for round_ in range(3):
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.engine.ingest_child",
                str(tmp_path),
                settings.resolved_cold_uri(),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "READY", "child failed to start"
        target = 15 + random.randint(0, 10)
        seen = 0
        while seen < target:
            line = child.stdout.readline()
            assert line.startswith("ACK"), line
            _, n, turn_id = line.split()
            acked[int(turn_id)] = int(n)
            seen += 1
        time.sleep(random.uniform(0, 0.03))  # land somewhere inside the next write
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        # Whatever the child printed before dying was acknowledged too.
        for line in child.stdout.read().splitlines():
            if line.startswith("ACK"):
                _, n, turn_id = line.split()
                acked[int(turn_id)] = int(n)

        engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
        try:
            with engine.ctx.cold.read() as session:
                stored = session.turns.by_ids(scope, list(acked))
                versions, _ = session.facts.all_versions(scope)
            assert set(stored) == set(acked), f"round {round_}: lost {set(acked) - set(stored)}"
            sourced = {tid for r in versions for tid in r.source_turn_ids}
            assert set(acked) <= sourced, f"round {round_}: facts of acknowledged turns missing"
            assert hot_state(engine, scope) == log_state(engine, scope)
            assert_consistent(engine, scope)
        finally:
            engine.close()


def test_a_scope_whose_hot_write_never_happened_is_replayed_on_open(
    settings: Settings, shared_embedder: object
) -> None:
    scope = Scope("agent-lag", "c1")
    engine = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    engine.remember(scope, [say("I live in Lisbon.")])
    # What a crash between the Cold commit and the Hot write leaves behind:
    drafts = engine.ctx.extractor.extract([say("I moved to Porto.")])
    vector = engine.embedder.embed([drafts[0].content])[0]
    with engine.ctx.cold.write() as session:
        row = session.scopes.lock(scope)
        record = engine._writes._new_record(row, drafts[0], row.turn + 1, say("x").occurred_at, ())  # noqa: SLF001
        changes = ChangeSet(turn=row.turn + 1)
        changes.add_version(record, vector)
        changes.log(EventKind.ADD, row.turn + 1, record)
        changes.apply(session, row)
    engine.close()
    assert record.id not in {r.id for r in engine.ctx.hot.store.load(scope).records}

    reopened = MemoryEngine.open(settings, embedder=shared_embedder)  # type: ignore[arg-type]
    try:
        assert record.id in hot_state(reopened, scope)
        assert_consistent(reopened, scope)
    finally:
        reopened.close()

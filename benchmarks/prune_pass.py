"""One maintenance pass that expires many records of one scope, timed (issue 25, item 4).

    python benchmarks/prune_pass.py EXPIRING KEPT [COLD_URI]

Loads KEPT CoreAnchor and EXPIRING EphemeralState records (random unit vectors) into one
scope, runs one pass over the load, lets five turns pass, warms the working set, then
times ``engine.maintain`` and counts the statements the Cold ROM runs for it. Prints one
JSON line. Run it against two checkouts to compare them.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import event
from sqlalchemy.engine.interfaces import ExecuteStyle

from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.embedding.factory import create_embedder
from nmafc.engine.engine import MemoryEngine
from nmafc.runtime import prepare_server_process
from nmafc.settings import Settings


def main(expiring: int, kept: int, cold_uri: str | None) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="nmafc-prune-") as data_dir:
        cold = {"uri": cold_uri} if cold_uri else {}
        settings = prepare_server_process(
            Settings(
                data_dir=Path(data_dir),
                cold=cold,  # type: ignore[arg-type]
                hot={"cache_max_mb": 8192},  # type: ignore[arg-type]
                consolidation={"inline": False},  # type: ignore[arg-type]
            )
        )
        embedder = create_embedder(settings.embedding, cache_dir=settings.resolved_cache_dir())
        engine = MemoryEngine.open(settings, embedder=embedder)
        scope = Scope("prune", "one")
        rng = np.random.default_rng(4)
        tiers = [Tier.CORE_ANCHOR] * kept + [Tier.EPHEMERAL_STATE] * expiring
        for start in range(0, len(tiers), 5000):
            part = tiers[start : start + 5000]
            vectors = rng.standard_normal((len(part), 384)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            engine.ingest(
                scope,
                [
                    FactDraft(f"note {start + i} about the garden", f"e{start + i}", t,
                              vector=vectors[i])
                    for i, t in enumerate(part)
                ],
            )  # fmt: skip
        # A first pass takes in the load (merge candidates among the new records), as the
        # background service would; the timed one then has only the expiry to do.
        engine.maintain(scope)
        with engine.ctx.cold.write() as session:
            row = session.scopes.lock(scope)
            session.scopes.advance(row, turn=row.turn + 5, seq=row.seq)
        engine.working_set(scope)  # the pass is timed without loading the scope
        statements = [0]

        def count(*args: Any) -> None:  # an observer: how often the database runs a statement
            context, executemany = args[4], args[5]
            many = executemany and context.execute_style is ExecuteStyle.EXECUTEMANY
            statements[0] += len(args[3]) if many else 1

        event.listen(engine.ctx.cold.engine, "before_cursor_execute", count)
        started = time.perf_counter()
        report = engine.maintain(scope)
        seconds = time.perf_counter() - started
        event.remove(engine.ctx.cold.engine, "before_cursor_execute", count)
        engine.close()
    return {
        "expiring": expiring,
        "kept": kept,
        "cold": (cold_uri or "sqlite").split(":")[0],
        "expired": report.expired,
        "pass_seconds": round(seconds, 3),
        "cold_statements": statements[0],
    }


if __name__ == "__main__":
    uri = sys.argv[3] if len(sys.argv) > 3 else None
    print(json.dumps(main(int(sys.argv[1]), int(sys.argv[2]), uri)))

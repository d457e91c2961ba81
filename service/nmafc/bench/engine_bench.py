"""``nmafc bench engine``: maintenance pass time, in-process recall latency and peak memory.

Each size runs in its own child process so its peak RSS is its own. Records are synthetic
(random unit vectors, templated text): this measures the engine and the stores, not
retrieval quality, and says so in its report.
"""

from __future__ import annotations

import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.embedding.factory import create_embedder
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.runtime import prepare_server_process
from nmafc.settings import Settings

TOPICS = [
    "hiking",
    "painting",
    "a new job",
    "the dog",
    "moving house",
    "a concert",
    "cooking",
    "a marathon",
    "the garden",
    "a trip to Japan",
    "piano lessons",
    "a wedding",
    "the car",
    "a book club",
    "volunteering",
    "the kids",
    "a promotion",
    "camping",
    "pottery",
    "chess",
]
PEOPLE = ["Caroline", "Melanie", "Jon", "Gina", "Ana", "Tomas", "Priya", "Lee"]
BATCH = 5000


def run(sizes: list[int], out: Path, queries: int = 300) -> dict[str, Any]:
    """Measure each size in a child process; write ``engine.json`` and ``engine.md``."""
    results = []
    for size in sizes:
        with tempfile.TemporaryDirectory(prefix="nmafc-bench-") as data_dir:
            child = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "nmafc.bench.engine_bench",
                    str(size),
                    data_dir,
                    str(queries),
                ],
                capture_output=True,
                text=True,
                check=False,
            )
        if child.returncode != 0:
            raise RuntimeError(f"bench child for {size} failed:\n{child.stderr[-3000:]}")
        results.append(json.loads(child.stdout.strip().splitlines()[-1]))
        print(_row(results[-1]), file=sys.stderr, flush=True)
    report = {"benchmark": "engine", "records": "synthetic", "results": results}
    out.mkdir(parents=True, exist_ok=True)
    (out / "engine.json").write_text(json.dumps(report, indent=2))
    (out / "engine.md").write_text(markdown(report))
    return report


def measure(size: int, data_dir: str, queries: int) -> dict[str, Any]:
    """One size, in this process: load, maintain, recall."""
    # The process stands in for a server's: tuned as one (BLAS threads, heap freezing).
    settings = prepare_server_process(
        Settings(
            data_dir=Path(data_dir),
            hot={"cache_max_mb": 8192},
            consolidation={"inline": False},
        )
    )
    embedder = create_embedder(settings.embedding, cache_dir=settings.resolved_cache_dir())
    engine = MemoryEngine.open(settings, embedder=embedder)
    scope = Scope("bench", "big")
    rng = np.random.default_rng(7)
    random.seed(7)

    started = time.perf_counter()
    loaded = 0
    while loaded < size:
        n = min(BATCH, size - loaded)
        engine.ingest(scope, [_draft(loaded + i, rng) for i in range(n)])
        loaded += n
        _advance_clock(engine, scope, 1.0)
    load_s = time.perf_counter() - started
    # What the background services of a running deployment do after a bulk load.
    engine.maintain(scope)
    engine.compact()

    # A realistic delta since the last pass: time passes (Ephemeral records expire), a few
    # hundred records are recalled often enough to be promoted, new facts (some near-
    # duplicates) arrive. Pass time should depend on this delta, not on the scope size.
    _advance_clock(engine, scope, 5.0)
    sample = random.sample(sorted(engine.working_set(scope)), 200)
    active = [rid for rid in sample if engine.get(scope, rid).tier is Tier.ACTIVE_CONTEXT][:50]
    for _ in range(10):  # at ten distinct turns: a use counts once per turn
        engine.reinforce(scope, active)
        _advance_clock(engine, scope, 1.0)
    fresh = [_draft(size + i, rng) for i in range(100)]
    engine.ingest(scope, fresh)
    pass_started = time.perf_counter()
    report = engine.maintain(scope)
    pass_s = time.perf_counter() - pass_started

    texts = [
        f"What did {random.choice(PEOPLE)} say about {random.choice(TOPICS)}?"
        for _ in range(queries)
    ]
    engine.recall(scope, texts[0], RecallOptions(reinforce=False))  # warm the working set
    latencies: dict[str, list[float]] = {"read_only": [], "reinforcing": []}
    for i, text in enumerate(texts):
        reinforce = i % 2 == 1
        t0 = time.perf_counter()
        engine.recall(scope, text, RecallOptions(budget_tokens=1000, reinforce=reinforce))
        latencies["reinforcing" if reinforce else "read_only"].append(
            (time.perf_counter() - t0) * 1000
        )
    embed_ms = _embed_ms(engine, texts[:100])
    engine.close()
    return {
        "records": size,
        "load_seconds": round(load_s, 1),
        "load_records_per_s": round(size / load_s),
        "maintenance_pass_s": round(pass_s, 3),
        "maintenance": {
            "expired": report.expired,
            "archived": report.archived,
            "promoted": report.promoted,
            "merged": report.merged,
            "relinked": report.relinked,
        },
        "recall_ms": {kind: _percentiles(values) for kind, values in latencies.items()},
        "query_embedding_ms_p50": round(embed_ms, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def _draft(i: int, rng: np.random.Generator) -> FactDraft:
    person, topic = PEOPLE[i % len(PEOPLE)], TOPICS[(i // 8) % len(TOPICS)]
    tier = (Tier.CORE_ANCHOR, Tier.ACTIVE_CONTEXT, Tier.ACTIVE_CONTEXT, Tier.EPHEMERAL_STATE)[i % 4]
    vector = rng.standard_normal(384).astype(np.float32)
    return FactDraft(
        content=f"{person} talked about {topic} (note {i})",
        entity=f"{person}_{topic}_{i % 5000}",
        tier=tier,
        related_entities=(f"{person}_{TOPICS[(i // 8 + 1) % len(TOPICS)]}_{(i + 1) % 5000}",),
        vector=vector / np.linalg.norm(vector),
    )


def _advance_clock(engine: MemoryEngine, scope: Scope, turns: float) -> None:
    with engine.ctx.cold.write() as session:
        row = session.scopes.lock(scope)
        session.scopes.advance(row, turn=row.turn + turns, seq=row.seq)


def _embed_ms(engine: MemoryEngine, texts: list[str]) -> float:
    times = []
    for text in texts:
        t0 = time.perf_counter()
        engine.embedder.embed([text])
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99), "n": len(ordered)}


def _row(r: dict[str, Any]) -> str:
    ro, rf = r["recall_ms"]["read_only"], r["recall_ms"]["reinforcing"]
    return (
        f"| {r['records']:,} | {r['load_records_per_s']:,} | {r['maintenance_pass_s']:.3f} | "
        f"{ro['p50']:.1f} / {ro['p99']:.1f} | {rf['p50']:.1f} / {rf['p99']:.1f} | "
        f"{r['query_embedding_ms_p50']:.1f} | {r['peak_rss_mb']:,} |"
    )


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| records in one scope | load (records/s) | maintenance pass (s) | "
        "recall p50 / p99 ms, read-only | recall p50 / p99 ms, reinforcing | "
        "query embedding p50 ms | peak RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        *(_row(r) for r in report["results"]),
        "",
        "Synthetic records (random unit vectors, templated text); recall includes embedding "
        "the query with the bundled model, hybrid search, rendering to 1,000 tokens and, in "
        "the reinforcing column, the batched reinforcement write.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]), sys.argv[2], int(sys.argv[3]))))

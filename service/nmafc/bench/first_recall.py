"""``nmafc bench first-recall``: the first search of a scope RAM does not hold, two ways.

One scope of ``records`` records (the scale benchmark's text and vectors) is searched by
two engines open on the same stores in this process: one loads the working set before it
answers (``hot.cache_inline_load_max_records`` above the scope's size, what every scope
did before), the other answers from the stores and loads it in the background
(threshold 0). Each repeat empties both caches and times, arm after arm, the first recall,
the time until the working set is in RAM, and the recall after that. The report also gives
the share of the RAM recall's hits, and of what its context shows (facts and turns), that
the first recall had too (the store path ranks without the entity-graph list).
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nmafc.bench.machine import describe
from nmafc.bench.scale_bench import ScaleOptions, _Corpus, _percentiles
from nmafc.bench.scale_text import question
from nmafc.core.scope import Scope
from nmafc.embedding.factory import create_embedder
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions, RecallResult
from nmafc.settings import Settings

SCOPE = Scope("first-recall", "big")
_BATCH = 5000
ARMS = {"inline": 10**9, "background": 0}  # hot.cache_inline_load_max_records


@dataclass(frozen=True, slots=True)
class FirstRecallOptions:
    records: int = 20_000
    repeats: int = 5
    embed_pool: int = 5_000
    seed: int = 25
    ready_timeout_s: float = 300.0


def run(options: FirstRecallOptions, out: Path, name: str = "first_recall") -> dict[str, Any]:
    """Measure; write ``<name>.json`` and ``<name>.md`` under ``out``."""
    import json

    with tempfile.TemporaryDirectory(prefix="nmafc-first-recall-") as data_dir:
        report = measure(options, Path(data_dir))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2))
    (out / f"{name}.md").write_text(markdown(report))
    return report


def measure(options: FirstRecallOptions, data_dir: Path) -> dict[str, Any]:
    base = Settings(data_dir=data_dir, consolidation={"inline": False})
    embedder = create_embedder(base.embedding, cache_dir=base.resolved_cache_dir())
    writer = MemoryEngine.open(_with_inline_max(base, ARMS["inline"]), embedder=embedder)
    engines = {"inline": writer}
    try:
        corpus = _Corpus(
            ScaleOptions(embed_pool=options.embed_pool, seed=options.seed), writer, options.records
        )
        for start in range(0, options.records, _BATCH):
            writer.ingest(SCOPE, corpus.drafts(min(_BATCH, options.records - start)))
        writer.compact()
        # Opened once the data is in: a LanceDB table opened before does not see writes
        # made through another handle, and would search an empty table.
        engines["background"] = MemoryEngine.open(
            _with_inline_max(base, ARMS["background"]), embedder=embedder
        )
        questions = random.Random(options.seed + 3)
        times: dict[str, dict[str, list[float]]] = {
            arm: {
                "first_ms": [],
                "ready_ms": [],
                "next_ms": [],
                "overlap": [],
                "context_overlap": [],
            }
            for arm in ARMS
        }
        loads_at_return: dict[str, list[int]] = {arm: [] for arm in ARMS}
        for _ in range(options.repeats):
            text = question(questions)
            for arm, engine in engines.items():
                _one(engine, text, options, times[arm], loads_at_return[arm])
    finally:
        for engine in engines.values():
            engine.close()
    return {
        "benchmark": "first_recall",
        "machine": describe(),
        "options": asdict(options),
        "retrieval_preset": base.retrieval.preset,
        "arms": {
            arm: {
                **{what: _percentiles(values) for what, values in t.items()},
                "loads_done_when_first_returned": loads_at_return[arm],
            }
            for arm, t in times.items()
        },
    }


def _one(
    engine: MemoryEngine,
    text: str,
    options: FirstRecallOptions,
    times: dict[str, list[float]],
    loads_at_return: list[int],
) -> None:
    hot = engine.ctx.hot
    hot.cache.drop()
    engine.ctx.archive.cache.drop()
    row = engine.ctx.row(SCOPE)
    assert row is not None
    recall = RecallOptions(budget_tokens=1000, reinforce=False)
    loads = hot.loads
    t0 = time.perf_counter()
    first = engine.recall(SCOPE, text, recall)
    times["first_ms"].append((time.perf_counter() - t0) * 1000)
    loads_at_return.append(hot.loads - loads)
    ends = time.monotonic() + options.ready_timeout_s
    while hot.cached(row) is None:
        if time.monotonic() > ends:
            raise RuntimeError(f"{SCOPE} not loaded within {options.ready_timeout_s} s")
        time.sleep(0.005)
    times["ready_ms"].append((time.perf_counter() - t0) * 1000)
    archive = engine.ctx.archive
    while not engine.ctx.cold.vector_search and archive.cached(row) is None:
        if time.monotonic() > ends:  # the archive is loaded after the working set
            raise RuntimeError(f"{SCOPE}'s archive not loaded within {options.ready_timeout_s} s")
        time.sleep(0.005)
    t1 = time.perf_counter()
    then = engine.recall(SCOPE, text, recall)
    times["next_ms"].append((time.perf_counter() - t1) * 1000)
    times["overlap"].append(_shared([h.id for h in first.hits], [h.id for h in then.hits]))
    times["context_overlap"].append(_shared(_shown(first), _shown(then)))


def _shown(result: RecallResult) -> list[str]:
    """What the rendered context holds: its facts and its turns."""
    return [*result.fact_ids, *(f"t{t}" for t in result.turn_ids)]


def _shared(first: list[str], ram: list[str]) -> float:
    """The share of the RAM recall's items the first recall had too."""
    return len(set(first) & set(ram)) / len(set(ram)) if ram else 1.0


def _with_inline_max(settings: Settings, limit: int) -> Settings:
    hot = settings.hot.model_copy(update={"cache_inline_load_max_records": limit})
    return settings.model_copy(update={"hot": hot})


def markdown(report: dict[str, Any]) -> str:
    o, arms = report["options"], report["arms"]
    lines = [
        f"# First recall of an uncached {o['records']:,}-record scope ({o['repeats']} repeats)",
        "",
        "| arm | first recall ms p50 / p95 | in RAM after ms p50 | next recall ms p50 "
        "| hits shared with the RAM recall | context shared |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for arm, a in arms.items():
        lines.append(
            f"| {arm} | {a['first_ms']['p50']:.0f} / {a['first_ms']['p95']:.0f} "
            f"| {a['ready_ms']['p50']:.0f} | {a['next_ms']['p50']:.1f} "
            f"| {a['overlap']['p50']:.2f} | {a['context_overlap']['p50']:.2f} |"
        )
    lines += [
        "",
        f"`nmafc bench first-recall --records {o['records']} --repeats {o['repeats']} "
        f"--embed-pool {o['embed_pool']}`; preset `{report['retrieval_preset']}`. Two engines "
        "on one store in one process, alternating; each repeat empties both caches first. "
        "Shared: the share of the RAM recall's hits (context: its facts and turns) that the "
        "first recall had too.",
    ]
    return "\n".join(lines) + "\n"

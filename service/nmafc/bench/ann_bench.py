"""``nmafc bench ann``: the Hot table's ANN index against the exact scan it replaces.

A LanceDB Hot table in a temporary directory is filled with ``rows`` synthetic records over
many scopes — one large scope, a few medium ones, many small ones (the tenants of one
replica), compacted as the compaction service would, and compacted once more at the end,
which builds the vector index (``AnnPolicy.min_rows`` is the full table's row count).
Then, for every class of scope and for agent-wide reaches, each query is searched on both
paths of ``HotStore.search_with`` in one process, alternately: through the index (with
the configured probes and re-ranking) and by the exact scan. The report gives the overlap
of their top-``limit`` ids, both latencies, and which path ``HotStore.search`` takes for
that class (the index only for a reach holding ``AnnPolicy.min_share`` of the table).

Vectors are clustered like text embeddings: each scope talks about its own few topics of
a shared pool (a topic centre plus noise, normalised), and a query is drawn the same way
from its scope's topics, so IVF partitions hold several tenants' rows, as they would.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nmafc.bench.machine import describe
from nmafc.core.records import MemoryRecord
from nmafc.core.scope import AgentScope, AnyScope, Scope
from nmafc.core.tiers import Tier
from nmafc.storage.hot.ann import AnnPolicy, IndexType
from nmafc.storage.hot.compaction import CompactionPolicy
from nmafc.storage.hot.lance import HotStore
from nmafc.storage.hot.rows import Watermark

Vector = npt.NDArray[np.float32]
DIM = 384
_TOPICS = 4_000  # the shared pool of topic centres
_TOPICS_PER_SCOPE = 12
_COMPACT_EVERY = 250  # scopes written between compactions while loading
_NOISE = 0.05  # per dimension: cosine ≈ 0.5 between two rows of one topic (384-d)


@dataclass(frozen=True, slots=True)
class AnnOptions:
    rows: int = 50_000
    big_share: float = 0.2  # of the rows, in one scope
    medium_scopes: int = 10
    medium_share: float = 0.2  # of the rows, over the medium scopes
    small_rows: int = 100  # rows per small scope (the rest of the table)
    queries: int = 50  # per class of scope
    limit: int = 60
    index_type: IndexType = "IVF_SQ"
    nprobes: int = 20
    refine_factor: int = 4
    seed: int = 25


def run(options: AnnOptions, out: Path, name: str = "ann") -> dict[str, Any]:
    """Measure; write ``<name>.json`` and ``<name>.md`` under ``out``."""
    with tempfile.TemporaryDirectory(prefix="nmafc-ann-") as data_dir:
        report = measure(options, Path(data_dir))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / f"{name}.md").write_text(markdown(report))
    return report


def measure(options: AnnOptions, data_dir: Path) -> dict[str, Any]:
    rng = np.random.default_rng(options.seed)
    centres = _normalised(rng.standard_normal((_TOPICS, DIM)).astype(np.float32))
    scopes = _layout(options)
    policy = AnnPolicy(
        # The rows of the full table (records and one watermark per scope): the last
        # compaction builds the index, the earlier ones keep fragments few while loading.
        min_rows=sum(scopes.values()) + len(scopes),
        index_type=options.index_type,
        nprobes=options.nprobes,
        refine_factor=options.refine_factor,
    )
    store = HotStore.open(
        str(data_dir / "hot"), table="memories", model="bench", dim=DIM,
        policy=CompactionPolicy(target_rows=1 << 20), ann_policy=policy,
    )  # fmt: skip
    topics = {s: rng.choice(_TOPICS, _TOPICS_PER_SCOPE, replace=False) for s in scopes}
    started = time.perf_counter()
    for pk, (scope, size) in enumerate(scopes.items(), start=1):
        vectors = _draw(rng, centres, topics[scope], size)
        rows = [(_record(scope, i), v) for i, v in enumerate(vectors)]
        store.write(scope, Watermark(pk, size), rows, ())
        if pk % _COMPACT_EVERY == 0 and pk < len(scopes):
            store.compact()  # each write adds a fragment: keep merge_insert fast
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    built = store.compact()["vector_index_built"]
    compact_s = time.perf_counter() - started
    index = store.vector_index()
    classes: dict[str, list[tuple[AnyScope, Any]]] = {
        "big": [(s, topics[s]) for s in scopes if s.conversation_id == "big"],
        "medium": [(s, topics[s]) for s in scopes if s.conversation_id.startswith("m")],
        "small": [(s, topics[s]) for s in scopes if s.conversation_id.startswith("s")],
    }
    agent = AgentScope("bench")
    classes["agent"] = [(agent, np.concatenate(list(topics.values())))]
    results = {
        name: _compare(store, rng, centres, reach, options) for name, reach in classes.items()
    }
    return {
        "options": asdict(options),
        "machine": describe(),
        "table_rows": store.total_rows(),
        "scopes": len(scopes),
        "load_s": round(load_s, 1),
        "compact_and_build_s": round(compact_s, 2),
        "index_built": bool(built),
        "index": index,
        "results": results,
    }


def _layout(options: AnnOptions) -> dict[Scope, int]:
    """Scope → rows: one big scope, a few medium ones, the rest small."""
    big = int(options.rows * options.big_share)
    medium = int(options.rows * options.medium_share) // max(1, options.medium_scopes)
    sizes = {Scope("bench", "big"): big}
    sizes |= {Scope("bench", f"m{i}"): medium for i in range(options.medium_scopes)}
    rest = options.rows - big - medium * options.medium_scopes
    small = max(1, options.small_rows)
    sizes |= {Scope("bench", f"s{i}"): small for i in range(rest // small)}
    return sizes


def _compare(
    store: HotStore,
    rng: np.random.Generator,
    centres: Vector,
    reaches: list[tuple[AnyScope, Any]],
    options: AnnOptions,
) -> dict[str, Any]:
    """Both searches for ``options.queries`` queries, alternating which runs first."""
    overlaps: list[float] = []
    exact_top1: list[bool] = []
    ms: dict[bool, list[float]] = {True: [], False: []}
    chosen: list[bool] = []
    for q in range(options.queries):
        reach, topics = reaches[int(rng.integers(len(reaches)))]
        query = _draw(rng, centres, topics, 1)[0]
        ids: dict[bool, list[str]] = {}
        for indexed in (True, False) if q % 2 == 0 else (False, True):
            started = time.perf_counter()
            hits = store.search_with(reach, query, options.limit, indexed=indexed)
            ms[indexed].append((time.perf_counter() - started) * 1000)
            ids[indexed] = [rid for rid, _ in hits]
        indexed_ids, exact = ids[True], ids[False]
        chosen.append(store.uses_index(reach))
        overlaps.append(len(set(indexed_ids) & set(exact)) / max(1, len(exact)))
        exact_top1.append(bool(exact) and exact[0] in indexed_ids)
    return {
        "queries": options.queries,
        "overlap_mean": round(float(np.mean(overlaps)), 4),
        "overlap_min": round(float(np.min(overlaps)), 4),
        "nearest_found": round(float(np.mean(exact_top1)), 4),
        "indexed_ms": _percentiles(ms[True]),
        "exact_ms": _percentiles(ms[False]),
        "search_uses_index": round(float(np.mean(chosen)), 2),
        "latency_ratio_p50": round(
            float(np.median(ms[True])) / max(1e-9, float(np.median(ms[False]))), 3
        ),
    }


def _draw(rng: np.random.Generator, centres: Vector, topics: Any, n: int) -> Vector:
    picked: Vector = centres[rng.choice(topics, n)]
    return _normalised(picked + _NOISE * rng.standard_normal((n, DIM)).astype(np.float32))


def _normalised(v: Vector) -> Vector:
    unit: Vector = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _record(scope: Scope, i: int) -> MemoryRecord:
    return MemoryRecord(
        id=f"{scope.conversation_id}-{i}",
        agent_id=scope.agent_id,
        conversation_id=scope.conversation_id,
        entity=f"e{i % 97}",
        content=f"bench fact {i}",
        tier=Tier.ACTIVE_CONTEXT,
    )


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50": pick(0.5), "p95": pick(0.95), "p99": pick(0.99)}


def _lines(report: dict[str, Any]) -> Iterator[str]:
    o = report["options"]
    index = report["index"] or {}
    yield "# Hot table ANN index against the exact scan (`nmafc bench ann`)"
    yield ""
    yield (
        f"{report['table_rows']:,} rows ({o['rows']:,} records, {DIM}-d, {report['scopes']:,} "
        f"scopes) on {report['machine'].get('cpu', 'this machine')}; index "
        f"{index.get('index_type', 'none')} built by one compaction in "
        f"{report['compact_and_build_s']} s; nprobes ≥ {o['nprobes']}, refine_factor "
        f"{o['refine_factor']}, top-{o['limit']}, {o['queries']} queries per class, both "
        f"arms alternating in one process."
    )
    yield ""
    yield (
        "| reach | overlap of top ids (mean / min) | exact nearest found | indexed p50 / p95 "
        "ms | exact p50 / p95 ms | p50 ratio | `search` takes the index |"
    )
    yield "|---|---|---|---|---|---|---|"
    for name, r in report["results"].items():
        yield (
            f"| {name} | {r['overlap_mean']:.3f} / {r['overlap_min']:.3f} | "
            f"{r['nearest_found']:.2f} | {r['indexed_ms']['p50']} / {r['indexed_ms']['p95']} | "
            f"{r['exact_ms']['p50']} / {r['exact_ms']['p95']} | {r['latency_ratio_p50']} | "
            f"{r['search_uses_index']:.0%} |"
        )


def markdown(report: dict[str, Any]) -> str:
    return "\n".join(_lines(report)) + "\n"

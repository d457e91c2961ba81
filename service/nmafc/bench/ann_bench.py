"""``nmafc bench ann``: the Hot table's ANN index against the exact scan it replaces.

A LanceDB Hot table in a temporary directory is filled with ``rows`` synthetic records over
many scopes — one large scope, a few medium ones, many small ones (the tenants of one
replica) — and compacted once, which builds the vector index (``AnnPolicy.min_rows`` is
set below ``rows``). Then, for every class of scope and for agent-wide reaches, each query
is searched twice in one process, alternately: ``HotStore.search`` (the index, with the
configured probes and re-ranking) and ``HotStore.exact_search`` (the flat scan). The
report gives the overlap of their top-``limit`` ids and both latencies.

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
from nmafc.storage.hot.lance import HotStore, Watermark

Vector = npt.NDArray[np.float32]
DIM = 384
_TOPICS = 4_000  # the shared pool of topic centres
_TOPICS_PER_SCOPE = 12
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
    policy = AnnPolicy(
        min_rows=max(1, options.rows // 2),
        index_type=options.index_type,
        nprobes=options.nprobes,
        refine_factor=options.refine_factor,
    )
    store = HotStore.open(
        str(data_dir / "hot"), table="memories", model="bench", dim=DIM,
        policy=CompactionPolicy(target_rows=1 << 20), ann_policy=policy,
    )  # fmt: skip
    scopes = _layout(options)
    topics = {s: rng.choice(_TOPICS, _TOPICS_PER_SCOPE, replace=False) for s in scopes}
    started = time.perf_counter()
    for pk, (scope, size) in enumerate(scopes.items(), start=1):
        vectors = _draw(rng, centres, topics[scope], size)
        rows = [(_record(scope, i), v) for i, v in enumerate(vectors)]
        store.write(scope, Watermark(pk, size), rows, ())
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
    indexed_ms: list[float] = []
    exact_ms: list[float] = []
    for q in range(options.queries):
        reach, topics = reaches[int(rng.integers(len(reaches)))]
        query = _draw(rng, centres, topics, 1)[0]
        for arm in ("indexed", "exact") if q % 2 == 0 else ("exact", "indexed"):
            started = time.perf_counter()
            if arm == "indexed":
                indexed = [rid for rid, _ in store.search(reach, query, options.limit)]
                indexed_ms.append((time.perf_counter() - started) * 1000)
            else:
                exact = [rid for rid, _ in store.exact_search(reach, query, options.limit)]
                exact_ms.append((time.perf_counter() - started) * 1000)
        overlaps.append(len(set(indexed) & set(exact)) / max(1, len(exact)))
        exact_top1.append(bool(exact) and exact[0] in indexed)
    return {
        "queries": options.queries,
        "overlap_mean": round(float(np.mean(overlaps)), 4),
        "overlap_min": round(float(np.min(overlaps)), 4),
        "nearest_found": round(float(np.mean(exact_top1)), 4),
        "indexed_ms": _percentiles(indexed_ms),
        "exact_ms": _percentiles(exact_ms),
        "latency_ratio_p50": round(
            float(np.median(indexed_ms)) / max(1e-9, float(np.median(exact_ms))), 3
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
        "ms | exact p50 / p95 ms | p50 ratio |"
    )
    yield "|---|---|---|---|---|---|"
    for name, r in report["results"].items():
        yield (
            f"| {name} | {r['overlap_mean']:.3f} / {r['overlap_min']:.3f} | "
            f"{r['nearest_found']:.2f} | {r['indexed_ms']['p50']} / {r['indexed_ms']['p95']} | "
            f"{r['exact_ms']['p50']} / {r['exact_ms']['p95']} | {r['latency_ratio_p50']} |"
        )


def markdown(report: dict[str, Any]) -> str:
    return "\n".join(_lines(report)) + "\n"

"""``nmafc bench scale``: many tenants on one replica, with a bounded working-set cache.

In one child process (so its RSS is its own) an in-process engine is tuned as a server's
is, then loaded with ``scopes`` × ``records_per_scope`` records of varied text (and,
optionally, one scope of ``big_scope_records``). A search window follows: a Zipf mix of
recalls over the scopes while a background thread keeps ingesting. The report gives RSS
before and after the load and at the end, bytes per cached record (RSS delta and the
cache's own accounting), the cache hit ratio, latency for searches that found their scope
cached and for those that did not, scope load times, one maintenance pass over every
scope, errors — and then the same window with the cache off (``hot.cache_max_mb = 0``)
over the big scope and a sample of the small ones.

Vectors come from the bundled embedder, for a pool of ``embed_pool`` distinct sentences
(0: every record's own text). With a pool smaller than the record count a record reuses
a pool sentence and its vector plus a little noise, so that copies stay below the merge
threshold; the report says which.
"""

from __future__ import annotations

import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psutil

from nmafc.bench.machine import describe, summary
from nmafc.bench.scale_text import Sentence, distinct_sentences, question
from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.core.tiers import Tier
from nmafc.embedding.factory import create_embedder
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.runtime import malloc, prepare_server_process
from nmafc.settings import Settings

Vector = npt.NDArray[np.float32]
TIERS = (Tier.CORE_ANCHOR, Tier.ACTIVE_CONTEXT, Tier.ACTIVE_CONTEXT, Tier.EPHEMERAL_STATE)
# Per-dimension noise of a reused pool vector: cosine ≈ 0.95 to the pool vector and ≈ 0.90
# between two copies (384-d), below the default merge threshold of 0.95.
NOISE = 0.0168
BIG = Scope("scale", "big")
_BATCH = 5000  # records per ingest call while loading the big scope
_COMPACT_EVERY = 1000  # scopes loaded between compactions (each load is a LanceDB commit)


@dataclass(frozen=True, slots=True)
class ScaleOptions:
    scopes: int = 10_000
    records_per_scope: int = 200
    big_scope_records: int = 100_000
    searches: int = 5_000
    cache_mb: int = 1024
    zipf: float = 1.1
    embed_pool: int = 20_000  # distinct sentences embedded; 0: every record's text
    off_sample: int = 50  # small scopes searched in the cache-off window
    ingest_batch: int = 10  # records per background ingest call
    ingest_pause_s: float = 0.05  # between background ingest calls
    seed: int = 25


def run(options: ScaleOptions, out: Path, name: str = "scale") -> dict[str, Any]:
    """Measure in a child process; write ``<name>.json`` and ``<name>.md`` under ``out``."""
    with tempfile.TemporaryDirectory(prefix="nmafc-scale-") as data_dir:
        # The child's progress and errors go to this process's stderr.
        child = subprocess.run(
            [sys.executable, "-m", "nmafc.bench.scale_bench", json.dumps(asdict(options)),
             data_dir],
            stdout=subprocess.PIPE, text=True, check=False,
        )  # fmt: skip
    if child.returncode != 0:
        raise RuntimeError(f"scale bench child failed (exit {child.returncode}); see above")
    report: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(report, indent=2))
    (out / f"{name}.md").write_text(markdown(report))
    return report


class _Corpus:
    """The embedded sentence pool, and records drawn from it."""

    def __init__(self, options: ScaleOptions, engine: MemoryEngine, total: int) -> None:
        self.rng = random.Random(options.seed)
        self.np_rng = np.random.default_rng(options.seed)
        size = total if options.embed_pool <= 0 else min(total, options.embed_pool)
        self.exact = size >= total  # every record gets its own text's embedding
        self.sentences = distinct_sentences(size, self.rng)
        started = time.perf_counter()
        vectors = [
            engine.embedder.embed([s.text for s in self.sentences[i : i + 512]])
            for i in range(0, size, 512)
        ]
        self.embed_s = time.perf_counter() - started
        self.vectors = np.concatenate(vectors).astype(np.float32)
        self._next = 0
        self._lock = threading.Lock()

    def drafts(self, count: int) -> list[FactDraft]:
        with self._lock:
            return [self._draft() for _ in range(count)]

    def _draft(self) -> FactDraft:
        i = self._next
        self._next += 1
        if self.exact and i < len(self.sentences):
            s, vector = self.sentences[i], self.vectors[i]
        else:
            j = int(self.rng.randrange(len(self.sentences)))
            s = self.sentences[j]
            noisy = self.vectors[j] + self.np_rng.normal(0, NOISE, self.vectors.shape[1])
            vector = (noisy / np.linalg.norm(noisy)).astype(np.float32)
        return _fact(s, vector, TIERS[i % len(TIERS)])


def _progress(what: str, since: float) -> None:
    print(f"[scale] {what} ({time.perf_counter() - since:.0f} s)", file=sys.stderr, flush=True)


def _fact(s: Sentence, vector: Vector, tier: Tier) -> FactDraft:
    return FactDraft(
        content=s.text, entity=s.entity, tier=tier, related_entities=(s.related,), vector=vector
    )


def measure(options: ScaleOptions, data_dir: str) -> dict[str, Any]:
    """The whole run, in this process (see the module docstring)."""
    settings = prepare_server_process(
        Settings(
            data_dir=Path(data_dir),
            hot={"cache_max_mb": options.cache_mb},
            consolidation={"inline": False},
        )
    )
    embedder = create_embedder(settings.embedding, cache_dir=settings.resolved_cache_dir())
    engine = MemoryEngine.open(settings, embedder=embedder)
    small = [Scope("scale", f"s{i:06d}") for i in range(options.scopes)]
    scopes = small + ([BIG] if options.big_scope_records else [])
    total = options.scopes * options.records_per_scope + options.big_scope_records
    begun = time.perf_counter()
    load_average = [round(os.getloadavg()[1], 1)]  # the host's other work, as it ran
    corpus = _Corpus(options, engine, total)
    _progress(f"embedded {len(corpus.sentences):,} sentences", begun)
    rss: dict[str, float] = {"before_load": _rss_mb()}

    started = time.perf_counter()
    for k, scope in enumerate(small, start=1):
        engine.ingest(scope, corpus.drafts(options.records_per_scope))
        _advance_clock(engine, scope, 1.0)
        if k % _COMPACT_EVERY == 0:
            engine.compact(planner_stats=False)
        if k % 100 == 0:
            _progress(f"loaded {k:,} scopes", begun)
    for start in range(0, options.big_scope_records, _BATCH):
        engine.ingest(BIG, corpus.drafts(min(_BATCH, options.big_scope_records - start)))
        _advance_clock(engine, BIG, 1.0)
    engine.compact()
    load_s = time.perf_counter() - started
    _progress(f"loaded {total:,} records", begun)
    engine.ctx.hot.cache.drop()  # what follows starts from an empty cache
    _settle()
    rss["after_load"] = _rss_mb()

    ranked = list(scopes)
    random.Random(options.seed + 1).shuffle(ranked)  # which scopes are popular: random
    window = _window(engine, corpus, ranked, _zipf(len(ranked), options.zipf), options)
    _progress("search window done", begun)
    _settle()
    rss["after_window"] = _rss_mb()
    cached = _cached_records(engine, scopes)
    cache_bytes = engine.ctx.hot.cache.nbytes()
    grown = (rss["after_window"] - rss["after_load"]) * 2**20
    loads = _load_times(engine, corpus.rng.sample(small, min(50, len(small))))
    big_load = _load_times(engine, [BIG]) if options.big_scope_records else []
    maintenance = _maintenance_pass(engine, scopes)
    _progress("maintenance pass done", begun)
    _settle()
    rss["end"] = _rss_mb()
    engine.close()

    # The same window with the cache off: recall searches LanceDB and the Cold ROM.
    off = settings.model_copy(update={"hot": settings.hot.model_copy(update={"cache_max_mb": 0})})
    engine = MemoryEngine.open(off, embedder=embedder)
    _progress("cache off: reopened", begun)
    sample = corpus.rng.sample(small, min(options.off_sample, len(small)))
    off_window = _window(engine, corpus, [BIG, *sample] if options.big_scope_records
                         else sample, None, options)  # fmt: skip
    engine.close()
    load_average.append(round(os.getloadavg()[1], 1))
    return {
        "benchmark": "scale",
        "machine": {**describe(), "load_average_5min": load_average},
        "options": asdict(options),
        "records_loaded": total,
        "vectors": {
            "embedded_sentences": len(corpus.sentences),
            "exact": corpus.exact,
            "embed_seconds": round(corpus.embed_s, 1),
            "noise_per_dim": 0.0 if corpus.exact else NOISE,
        },
        "load_seconds": round(load_s, 1),
        "load_records_per_s": round(total / load_s) if load_s else 0,
        "rss_mb": {k: round(v) for k, v in rss.items()},
        "cached_records": cached,
        "cache_mb": round(cache_bytes / 2**20, 1),
        "bytes_per_cached_record": {
            "rss_delta": round(grown / cached) if cached else None,
            "cache_accounting": round(cache_bytes / cached) if cached else None,
        },
        "window": window,
        "scope_load_ms": {"small": _percentiles(loads), "big": _percentiles(big_load)},
        "maintenance": maintenance,
        "cache_off": off_window,
        "errors": window["errors"] + off_window["errors"],
    }


def _window(
    engine: MemoryEngine,
    corpus: _Corpus,
    targets: Sequence[Scope],
    weights: npt.NDArray[np.float64] | None,
    options: ScaleOptions,
) -> dict[str, Any]:
    """``options.searches`` recalls while ingest goes on; ``weights`` None: big scope on
    every other search, the rest uniform (the cache-off window)."""
    rng = np.random.default_rng(options.seed + 2)
    if weights is None:
        rest = [s for s in targets if s != BIG] or list(targets)
        order = [BIG if i % 2 == 0 and BIG in targets else rest[int(rng.integers(len(rest)))]
                 for i in range(options.searches)]  # fmt: skip
    else:
        order = [targets[i] for i in rng.choice(len(targets), options.searches, p=weights)]
    writable = [s for s in targets if s != BIG] or list(targets)
    ingest = _Ingest(engine, corpus, writable, options)
    latencies: dict[str, list[float]] = {"cached": [], "uncached": [], "big": [], "small": []}
    errors: list[str] = []
    loads_before = engine.ctx.hot.loads
    questions = random.Random(options.seed + 3)
    cache = engine.ctx.hot.cache
    recall = RecallOptions(budget_tokens=1000, reinforce=False)
    ingest.start()
    started = time.perf_counter()
    try:
        for scope in order:
            hit = cache.enabled and cache.get(scope) is not None
            text = question(questions)
            t0 = time.perf_counter()
            try:
                engine.recall(scope, text, recall)
            except Exception as exc:  # a benchmark counts failures, it does not stop on one
                errors.append(f"search {scope}: {type(exc).__name__}: {exc}")
                continue
            ms = (time.perf_counter() - t0) * 1000
            latencies["cached" if hit else "uncached"].append(ms)
            latencies["big" if scope == BIG else "small"].append(ms)
    finally:
        elapsed = time.perf_counter() - started
        ingest.stop()
    searched = len(latencies["cached"]) + len(latencies["uncached"])
    return {
        "searches": searched,
        "seconds": round(elapsed, 1),
        "hit_ratio": round(len(latencies["cached"]) / searched, 3) if searched else None,
        "scope_loads": engine.ctx.hot.loads - loads_before,
        "search_ms": {kind: _percentiles(values) for kind, values in latencies.items()},
        "ingested_during": ingest.records,
        "ingest_calls_during": ingest.calls,
        "errors": len(errors) + len(ingest.errors),
        "error_samples": (errors + ingest.errors)[:5],
    }


class _Ingest:
    """Small ingest batches into random scopes on a thread, until stopped."""

    def __init__(
        self, engine: MemoryEngine, corpus: _Corpus, scopes: Sequence[Scope], o: ScaleOptions
    ) -> None:
        self.engine, self.corpus, self.scopes, self.options = engine, corpus, scopes, o
        self.records = self.calls = 0
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="scale-ingest", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        rng = random.Random(self.options.seed + 4)
        while not self._stop.wait(self.options.ingest_pause_s):
            scope = rng.choice(self.scopes)
            try:
                self.engine.ingest(scope, self.corpus.drafts(self.options.ingest_batch))
            except Exception as exc:  # counted and reported
                self.errors.append(f"ingest {scope}: {type(exc).__name__}: {exc}")
                continue
            self.records += self.options.ingest_batch
            self.calls += 1


def _cached_records(engine: MemoryEngine, scopes: Sequence[Scope]) -> int:
    cache = engine.ctx.hot.cache
    return sum(len(ws.records) for s in scopes if (ws := cache.get(s)) is not None)


def _load_times(engine: MemoryEngine, scopes: Sequence[Scope]) -> list[float]:
    """Milliseconds to bring each scope's working set into RAM from LanceDB."""
    times = []
    for scope in scopes:
        row = engine.ctx.row(scope)
        if row is None:
            continue
        engine.ctx.hot.cache.drop([scope])
        t0 = time.perf_counter()
        engine.ctx.hot.working_set(row)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def _maintenance_pass(engine: MemoryEngine, scopes: Sequence[Scope]) -> dict[str, Any]:
    """Five turns pass in every scope (Ephemeral records expire), then one pass over all."""
    for scope in scopes:
        _advance_clock(engine, scope, 5.0)
    per_scope: list[float] = []
    totals = {"expired": 0, "archived": 0, "promoted": 0, "merged": 0}
    started = time.perf_counter()
    for scope in scopes:
        t0 = time.perf_counter()
        report = engine.maintain(scope)
        per_scope.append((time.perf_counter() - t0) * 1000)
        for key in totals:
            totals[key] += int(getattr(report, key))
    return {
        "scopes": len(scopes),
        "pass_seconds": round(time.perf_counter() - started, 2),
        "per_scope_ms": _percentiles(per_scope),
        **totals,
    }


def _advance_clock(engine: MemoryEngine, scope: Scope, turns: float) -> None:
    with engine.ctx.cold.write() as session:
        row = session.scopes.lock(scope)
        session.scopes.advance(row, turn=row.turn + turns, seq=row.seq)


def _zipf(n: int, s: float) -> npt.NDArray[np.float64]:
    """Probabilities of ranks 1..n under Zipf's law with exponent ``s``."""
    weights = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    return np.asarray(weights / weights.sum(), dtype=np.float64)


def _rss_mb() -> float:
    return float(psutil.Process().memory_info().rss) / 2**20


def _settle() -> None:
    """Free what can be freed before reading RSS: a collection and glibc's trim."""
    gc.collect()
    malloc.trim()


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99), "n": len(ordered)}


def _fmt(p: dict[str, float]) -> str:
    if not p.get("n"):
        return "–"
    return f"{p['p50']:.1f} / {p['p95']:.1f} / {p['p99']:.1f} (n={int(p['n']):,})"


def _lines(report: dict[str, Any]) -> Iterator[str]:
    o, w, off, m = report["options"], report["window"], report["cache_off"], report["maintenance"]
    rss, per = report["rss_mb"], report["bytes_per_cached_record"]
    v = report["vectors"]
    yield (
        f"{o['scopes']:,} scopes × {o['records_per_scope']:,} records"
        + (f" + one scope of {o['big_scope_records']:,}" if o["big_scope_records"] else "")
        + f" = {report['records_loaded']:,} records; cache {o['cache_mb']:,} MB; "
        f"Zipf s = {o['zipf']}; {summary(report['machine'])}"
        + (
            f", 5-minute load average {' → '.join(map(str, load))} at start → end."
            if (load := report["machine"].get("load_average_5min"))
            else "."
        )
    )
    yield ""
    yield "| measure | value |"
    yield "|---|---:|"
    yield f"| load | {report['load_seconds']} s ({report['load_records_per_s']:,} records/s) |"
    yield (
        f"| RSS MB before load / after load / after window / end | {rss['before_load']:,} / "
        f"{rss['after_load']:,} / {rss['after_window']:,} / {rss['end']:,} |"
    )
    yield f"| cached records after the window | {report['cached_records']:,} |"
    yield (
        f"| bytes per cached record: RSS delta / cache accounting | "
        f"{per['rss_delta'] or '–'} / {per['cache_accounting'] or '–'} |"
    )
    yield f"| cache hit ratio | {w['hit_ratio']} ({w['scope_loads']:,} scope loads) |"
    yield f"| search ms p50 / p95 / p99, scope cached | {_fmt(w['search_ms']['cached'])} |"
    yield f"| search ms p50 / p95 / p99, scope not cached | {_fmt(w['search_ms']['uncached'])} |"
    yield f"| search ms p50 / p95 / p99, the big scope | {_fmt(w['search_ms']['big'])} |"
    yield f"| ingested during the window | {w['ingested_during']:,} records |"
    yield f"| scope load ms p50 / p95 / p99, small | {_fmt(report['scope_load_ms']['small'])} |"
    yield f"| scope load ms, the big scope | {_fmt(report['scope_load_ms']['big'])} |"
    yield (
        f"| maintenance pass over {m['scopes']:,} scopes | {m['pass_seconds']} s "
        f"({m['expired']:,} expired, {m['archived']:,} archived; per scope "
        f"{_fmt(m['per_scope_ms'])} ms) |"
    )
    yield f"| cache off: big scope, ms p50 / p95 / p99 | {_fmt(off['search_ms']['big'])} |"
    yield f"| cache off: small scopes, ms p50 / p95 / p99 | {_fmt(off['search_ms']['small'])} |"
    yield f"| errors | {report['errors']} |"
    yield ""
    yield (
        "Search = one in-process recall (query embedding, hybrid search, rendering to 1,000 "
        "tokens, no reinforcement) on one thread while another ingests "
        f"{o['ingest_batch']} records every {o['ingest_pause_s']} s. "
        + (
            "Every record's vector is its own text's embedding."
            if v["exact"]
            else f"Vectors: {v['embedded_sentences']:,} distinct sentences embedded with the "
            f"bundled model, reused with Gaussian noise σ = {v['noise_per_dim']} per dimension."
        )
    )


def markdown(report: dict[str, Any]) -> str:
    return "\n".join(_lines(report)) + "\n"


if __name__ == "__main__":
    opts = ScaleOptions(**json.loads(sys.argv[1]))
    print(json.dumps(measure(opts, sys.argv[2])))

"""Prometheus metrics of one app instance. Labels are route templates and kinds, never ids.

Each app gets its own registry (two apps in one process — tests, the two-replica check —
must not share counters). Store sizes are read at scrape time.

With ``nmafc serve --workers N`` a scrape reaches one worker but must report the service:
the supervisor gives the workers a shared ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's
multiprocess mode), every worker's counters and histograms are written there, and a scrape
adds them up; the process figures (CPU, memory) are summed over the workers' processes.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from nmafc.engine.engine import StoreSizes
from nmafc.services.base import ServiceRun

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


@contextmanager
def shared_metrics_dir() -> Iterator[Path]:
    """A fresh multiprocess directory for the workers spawned inside the block."""
    with tempfile.TemporaryDirectory(prefix="nmafc-metrics-") as path:
        os.environ[MULTIPROC_ENV] = path
        try:
            yield Path(path)
        finally:
            del os.environ[MULTIPROC_ENV]


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.shared_dir = os.environ.get(MULTIPROC_ENV) or None
        self._gauges: Collector | None = None
        # process_cpu_seconds_total, process_resident_memory_bytes, open fds: what an
        # operator sizes replicas by, and what `nmafc bench http` divides by its recalls.
        if self.shared_dir is None:
            ProcessCollector(registry=r)
        self.requests = Counter(
            "nmafc_http_requests", "HTTP requests by route template.",
            ["method", "route", "status"], registry=r,
        )  # fmt: skip
        self.request_seconds = Histogram(
            "nmafc_http_request_duration_seconds", "HTTP request latency by route template.",
            ["method", "route"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.ingested = Counter(
            "nmafc_ingested", "Items stored by POST /v1/memories.", ["kind"], registry=r
        )
        self.ingest_seconds = Histogram(
            "nmafc_ingest_duration_seconds", "Time to store one add request (extract, embed, "
            "commit).", ["kind"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.recalls = Counter("nmafc_recalls", "Searches served, by reach.", ["scope"], registry=r)
        self.recall_seconds = Histogram(
            "nmafc_recall_duration_seconds", "Time to answer one search.", ["scope"],
            buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.recall_hits = Histogram(
            "nmafc_recall_hits", "Hits returned per search.",
            buckets=(0, 1, 2, 5, 10, 20, 50, 100), registry=r,
        )  # fmt: skip
        self.job_seconds = Histogram(
            "nmafc_background_job_duration_seconds", "Duration of one background service round.",
            ["service"], buckets=LATENCY_BUCKETS, registry=r,
        )  # fmt: skip
        self.job_items = Counter(
            "nmafc_background_job_items", "Items (scopes, rows) handled by background services.",
            ["service"], registry=r,
        )  # fmt: skip
        self.job_failures = Counter(
            "nmafc_background_job_failures", "Background service rounds that failed.",
            ["service"], registry=r,
        )  # fmt: skip
        self.live_connections = Gauge(
            "nmafc_live_connections", "Open /ws/live subscriptions.",
            registry=r, multiprocess_mode="livesum",
        )  # fmt: skip
        self.live_dropped = Counter(
            "nmafc_live_dropped", "Live clients dropped for falling behind.", registry=r
        )
        self.live_published = Counter(
            "nmafc_live_events_published", "Events handed to live clients.", registry=r
        )
        self.preloading = Gauge(
            "nmafc_preloading_workers", "Server processes still preloading working sets "
            "(hot.preload_scopes); searches of scopes not yet loaded load them first.",
            registry=r, multiprocess_mode="livesum",
        )  # fmt: skip

    def observe_job(self, run: ServiceRun) -> None:
        """Service observer: one background round finished."""
        self.job_seconds.labels(run.service).observe(run.seconds)
        self.job_items.labels(run.service).inc(run.items)
        if run.failed:
            self.job_failures.labels(run.service).inc()

    def observe_live(self, kind: str, change: int) -> None:
        """Hub observer: a live client came or went, was dropped, or events were handed on."""
        if kind == "subscribers":
            self.live_connections.inc(change)
        elif kind == "dropped":
            self.live_dropped.inc(change)
        elif kind == "published":
            self.live_published.inc(change)

    def watch(self, sizes: Callable[[], StoreSizes]) -> Collector:
        """Register the scrape-time collector of store sizes."""
        collector = _Gauges(sizes)
        self.registry.register(collector)
        self._gauges = collector
        return collector

    def render(self) -> bytes:
        if self.shared_dir is None:
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        multiprocess.MultiProcessCollector(merged, path=self.shared_dir)  # type: ignore[no-untyped-call]
        merged.register(_WorkerProcesses(Path(self.shared_dir)))
        if self._gauges is not None:
            merged.register(self._gauges)
        return generate_latest(merged)


class _WorkerProcesses(Collector):
    """CPU seconds and resident memory summed over the workers (the pids in the shared dir)."""

    def __init__(self, shared_dir: Path) -> None:
        self._dir = shared_dir

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        pids = {int(f.stem.rsplit("_", 1)[-1]) for f in self._dir.glob("*.db")} | {os.getpid()}
        cpu = rss = 0.0
        ticks, page = os.sysconf("SC_CLK_TCK"), os.sysconf("SC_PAGE_SIZE")
        for pid in pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:  # gone, or not Linux
                continue
            cpu += (int(stat[11]) + int(stat[12])) / ticks  # utime + stime
            rss += int(stat[21]) * page
        yield CounterMetricFamily(
            "process_cpu_seconds", "CPU seconds of the live worker processes.", value=cpu
        )
        yield GaugeMetricFamily(
            "process_resident_memory_bytes", "Resident memory of the worker processes.", value=rss
        )


class _Gauges(Collector):
    def __init__(self, sizes: Callable[[], StoreSizes]) -> None:
        self._sizes = sizes

    def describe(self) -> list[Metric]:
        return []  # collected lazily: describing would read the stores at registration

    def collect(self) -> Iterator[Metric]:
        try:
            sizes = self._sizes()
        except Exception:  # an unreachable store must not break the scrape
            sizes = None
        if sizes is not None:
            yield GaugeMetricFamily(
                "nmafc_cold_store_bytes", "Bytes used by the Cold ROM.", value=sizes.cold_bytes
            )
            yield GaugeMetricFamily(
                "nmafc_hot_store_rows", "Rows in the LanceDB table.", value=sizes.hot_rows
            )
            yield GaugeMetricFamily(
                "nmafc_working_set_cache_bytes",
                "RAM held by working-set caches.",
                value=sizes.cache_bytes,
            )

"""``nmafc bench http``: recall latency and throughput over HTTP with concurrent clients.

For each scope count it loads ``records`` synthetic records spread over that many
conversations of one agent (random unit vectors and templated text, as ``bench engine``
does), then for each of ``workers`` starts ``nmafc serve --workers N`` on a free loopback
port in a child process (auth on, an admin key), touches every scope once (the first
search of a scope a worker has not preloaded loads it: that is the reported warm-up), lets
the clients run unmeasured for ``settle`` seconds (each worker holds its own working sets,
and a scope warmed through one worker may be searched through another), then lets
``clients`` closed-loop clients send ``POST /v1/memories/search`` to random scopes for
``duration`` seconds. With ``--url`` it measures an already running service instead and
loads nothing. Clients and server share this machine's cores; the report says so.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from nmafc.bench import machine
from nmafc.bench.engine_bench import PEOPLE, TOPICS, _draft
from nmafc.bench.wire import KeepAliveConnection, WireError
from nmafc.client import Client
from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import NmafcError
from nmafc.settings import Settings

AGENT = "bench"
BATCH = 5000
REQUEST_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class HttpBenchOptions:
    records: int = 100_000
    scopes: tuple[int, ...] | list[int] = (1, 1000)
    clients: int = 32
    duration_s: float = 30.0
    url: str | None = None
    api_key: str | None = None
    reinforce: bool = False
    budget_tokens: int = 1000
    workers: tuple[int, ...] | list[int] = (1,)
    settle_s: float = 10.0


def run(options: HttpBenchOptions, out: Path) -> dict[str, Any]:
    """Every scope count in turn; writes ``http.json`` and ``http.md`` under ``out``."""
    results = []
    for n_scopes in options.scopes:
        if options.url:
            runs = [asyncio.run(_measure(options.url, options.api_key, n_scopes, options))]
        else:
            with tempfile.TemporaryDirectory(prefix="nmafc-bench-http-") as data_dir:
                load_s = load(Path(data_dir), options.records, n_scopes)
                runs = [
                    {**_measure_local(Path(data_dir), n_scopes, workers, options),
                     "load_seconds": round(load_s, 1)}
                    for workers in options.workers
                ]  # fmt: skip
        for result in runs:
            results.append(result)
            print(_row(result), file=sys.stderr, flush=True)
    report = {
        "benchmark": "http",
        "options": {
            **asdict(options),
            "scopes": list(options.scopes),
            "workers": list(options.workers),
            "api_key": None,
        },
        "machine": machine.describe(),
        "results": results,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "http.json").write_text(json.dumps(report, indent=2))
    (out / "http.md").write_text(markdown(report))
    return report


def _measure_local(
    data_dir: Path, n_scopes: int, workers: int, options: HttpBenchOptions
) -> dict[str, Any]:
    key = "bench-" + secrets.token_urlsafe(16)
    port = _free_port()
    env = {
        **os.environ,
        "NMAFC_DATA_DIR": str(data_dir),
        "NMAFC_API_KEYS": f"{key}:*",
        "NMAFC_SERVER_LOG_LEVEL": "warning",
        "NMAFC_HOT_CACHE_MAX_MB": "8192",
    }
    for name in list(env):
        if name in ("NMAFC_COLD_URI", "NMAFC_HOT_URI", "NMAFC_CONFIG"):
            del env[name]
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nmafc.cli.main",
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],  # fmt: skip
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_ready(url, server, deadline=time.monotonic() + 180)
        result = {**asyncio.run(_measure(url, key, n_scopes, options)), "workers": workers}
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return result


def load(data_dir: Path, records: int, n_scopes: int) -> float:
    """Synthetic records spread evenly over ``n_scopes`` conversations; returns seconds."""
    settings = Settings(data_dir=data_dir, consolidation={"inline": False})
    engine = MemoryEngine.open(settings)
    rng = np.random.default_rng(7)
    started = time.perf_counter()
    try:
        per_scope = max(1, records // n_scopes)
        for index in range(n_scopes):
            scope = _scope(index)
            done = 0
            while done < per_scope:
                n = min(BATCH, per_scope - done)
                base = index * per_scope + done
                engine.ingest(scope, [_draft(base + i, rng) for i in range(n)])
                done += n
        engine.compact()
    finally:
        engine.close()
    return time.perf_counter() - started


async def _measure(
    url: str, api_key: str | None, n_scopes: int, options: HttpBenchOptions
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    rng = random.Random(11)
    # Plain keep-alive connections rather than httpx: on a 2-core machine shared with the
    # server, the client should spend as little CPU per request as possible (see wire).
    idle = [KeepAliveConnection(url, headers) for _ in range(options.clients)]

    async def recall(index: int, connection: KeepAliveConnection) -> tuple[float, bool]:
        body = {
            "query": f"What did {rng.choice(PEOPLE)} say about {rng.choice(TOPICS)}?",
            "budget_tokens": options.budget_tokens,
            "reinforce": options.reinforce,
        }
        scope = _scope(index)
        scoped = {"X-Agent-ID": scope.agent_id, "X-Conversation-ID": scope.conversation_id}
        started = time.perf_counter()
        try:
            sent = connection.post_json("/v1/memories/search", body, scoped)
            status, _ = await asyncio.wait_for(sent, REQUEST_TIMEOUT_S)
            ok = status == 200
        except WireError:
            ok = False
        except TimeoutError:  # a late response would answer the next request: reconnect
            await connection.close()
            ok = False
        return (time.perf_counter() - started) * 1000, ok

    try:
        # The measurement is of a service in its steady state: let start-up preloading end.
        preload_started = time.monotonic()
        while (await _server_process(url, headers)).get("nmafc_preloading_workers", 0) > 0:
            if time.monotonic() - preload_started > PRELOAD_TIMEOUT_S:
                break
            await asyncio.sleep(0.5)
        preload_s = time.monotonic() - preload_started
        warm_started = time.perf_counter()

        async def warm(indexes: range) -> list[tuple[float, bool]]:
            connection = idle[indexes.start]
            return [await recall(i, connection) for i in indexes]

        # Every scope once, spread over the clients' connections.
        lanes = [range(c, n_scopes, options.clients) for c in range(min(options.clients, n_scopes))]
        warmed = [r for lane in await asyncio.gather(*(warm(ix) for ix in lanes)) for r in lane]
        warm_s = time.perf_counter() - warm_started

        latencies: list[float] = []
        errors = 0

        async def client(connection: KeepAliveConnection, stop: float, measured: bool) -> None:
            nonlocal errors
            while time.monotonic() < stop:
                ms, ok = await recall(rng.randrange(n_scopes), connection)
                if measured:
                    latencies.append(ms)
                    errors += 0 if ok else 1

        if options.settle_s > 0:
            settle_until = time.monotonic() + options.settle_s
            await asyncio.gather(*(client(c, settle_until, False) for c in idle))
        before = await _server_process(url, headers)
        started, client_started = time.perf_counter(), time.process_time()
        stop = time.monotonic() + options.duration_s
        await asyncio.gather(*(client(c, stop, True) for c in idle))
        elapsed = time.perf_counter() - started
        client_cpu_s = time.process_time() - client_started
        after = await _server_process(url, headers)
    finally:
        await asyncio.gather(*(connection.close() for connection in idle))
    return {
        "records": options.records,
        "scopes": n_scopes,
        "clients": options.clients,
        "duration_s": round(elapsed, 1),
        "requests": len(latencies),
        "errors": errors + sum(1 for _, ok in warmed if not ok),
        "throughput_rps": round(len(latencies) / elapsed, 1) if elapsed else 0.0,
        "latency_ms": _percentiles(latencies),
        "server_cpu": _cpu_use(
            before.get("process_cpu_seconds_total"),
            after.get("process_cpu_seconds_total"),
            elapsed,
            len(latencies),
        ),
        # The load generator's own CPU: on a shared machine, taken from the server.
        "client_cpu_ms_per_request": round(client_cpu_s * 1000 / len(latencies), 2)
        if latencies
        else None,
        "server_rss_mb": round(after["process_resident_memory_bytes"] / 2**20)
        if "process_resident_memory_bytes" in after
        else None,
        "preload_seconds": round(preload_s, 1),
        "warmup": {"seconds": round(warm_s, 1), "latency_ms": _percentiles([m for m, _ in warmed])},
    }


_PROCESS_METRICS = (
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "nmafc_preloading_workers",
)
PRELOAD_TIMEOUT_S = 600.0


async def _server_process(url: str, headers: dict[str, str]) -> dict[str, float]:
    """The server's CPU seconds and resident bytes from ``/metrics``, those it shows."""
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=10) as http:
        try:
            response = await http.get("/metrics")
        except httpx.HTTPError:
            return {}
    if response.status_code != 200:
        return {}  # a key without admin rights, or metrics behind another port
    found: dict[str, float] = {}
    for line in response.text.splitlines():
        name, _, value = line.partition(" ")
        if name in _PROCESS_METRICS:
            found[name] = float(value)
    return found


def _cpu_use(
    before: float | None, after: float | None, elapsed: float, requests: int
) -> dict[str, float] | None:
    """The server's CPU per search and cores in use over the window, and what that bounds.

    ``rps_if_all_cores``: searches per second if the server had every core of this machine
    at that CPU cost per search; with closed-loop clients the mean latency cannot fall below
    ``clients / rps_if_all_cores`` whatever the scheduling.
    """
    if before is None or after is None or not requests or elapsed <= 0:
        return None
    seconds = after - before
    cpus = os.cpu_count() or 1
    return {
        "ms_per_search": round(seconds * 1000 / requests, 2),
        "cores": round(seconds / elapsed, 2),
        "rps_if_all_cores": round(cpus * requests / seconds, 1) if seconds > 0 else 0.0,
    }


def _scope(index: int) -> Scope:
    return Scope(AGENT, f"c{index}")


def _wait_ready(url: str, server: subprocess.Popen[bytes], deadline: float) -> None:
    with Client(url, timeout=2) as client:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                stderr = server.stderr.read().decode(errors="replace") if server.stderr else ""
                raise RuntimeError(
                    f"nmafc serve exited with {server.returncode}:\n{stderr[-3000:]}"
                )
            try:
                client.ready()
                return
            except (httpx.HTTPError, NmafcError):
                time.sleep(0.3)
    raise RuntimeError(f"nmafc serve at {url} was not ready in time")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0, "n": 0}
    ordered = sorted(values)

    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)

    return {"p50": pick(0.50), "p95": pick(0.95), "p99": pick(0.99), "n": len(ordered)}


def _row(r: dict[str, Any]) -> str:
    lat, cpu = r["latency_ms"], r.get("server_cpu")
    used = (
        f"{cpu['ms_per_search']:.1f} | {cpu['cores']:.2f} | {cpu['rps_if_all_cores']:.0f}"
        if cpu
        else "– | – | –"
    )
    rss, client = r.get("server_rss_mb"), r.get("client_cpu_ms_per_request")
    return (
        f"| {r['records']:,} | {r['scopes']:,} | {r.get('workers', '–')} | {r['clients']} | "
        f"{lat['p50']:.1f} | "
        f"{lat['p95']:.1f} | {lat['p99']:.1f} | {r['throughput_rps']:.1f} | {r['errors']} | "
        f"{used} | {'–' if rss is None else f'{rss:,}'} | "
        f"{'–' if client is None else f'{client:.2f}'} |"
    )


def markdown(report: dict[str, Any]) -> str:
    cpus = report["machine"]["cpus"]
    lines = [
        "| records | scopes | workers | clients | p50 ms | p95 ms | p99 ms | searches/s | errors "
        "| server CPU ms/search | server cores | searches/s at all cores | server RSS MB "
        "| client CPU ms/search |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(_row(r) for r in report["results"]),
        "",
        f"POST /v1/memories/search (budget {report['options']['budget_tokens']} tokens, "
        f"reinforce={report['options']['reinforce']}, no top_k: the server's default, 20 "
        "hits unless NMAFC_RETRIEVAL_TOP_K says otherwise), closed-loop clients on the same "
        f"{machine.summary(report['machine'])} as the server; synthetic records. Server "
        "CPU is the `process_cpu_seconds_total` the server reports on `/metrics` over the "
        "window (all workers); "
        f"searches/s at all cores is {cpus} cores divided by the CPU per search, the most "
        "this machine could serve at that cost per search. RSS is the server's resident "
        "memory at the end of the window (all workers). Client CPU is the load "
        "generator's own, taken from the server's share of the cores. Each run follows "
        f"{report['options']['settle_s']:g} s of unmeasured load.",
    ]
    return "\n".join(lines) + "\n"

"""``nmafc bench load``: concurrent writers and readers, then proof that no write was lost.

Each writer owns one conversation and sends ``POST /v1/memories`` (one user message
carrying a unique token) in a closed loop; each reader sends ``POST /v1/memories/search``
(read-only, ``reinforce=false``) for a token already written. Every acknowledged (2xx)
write is recorded with its token and memory ids. When the load ends, a verification pass
asks for each of them again: ``GET /v1/memories/{id}`` for every memory id, and a keyword
search for the token in its conversation. A write is *lost* when any of that fails.
Errors are counted by status (``503``, ``timeout``, ``connect_error`` …); a 503 without a
``Retry-After`` header is counted separately. With no ``--url`` it starts ``nmafc serve``
on a free loopback port over a temporary data directory (the embedded default).

With ``writes`` set the load stops after that many writes instead of after ``duration_s``,
and ``new_share`` of them go to a conversation of their own (each a new scope to load).
The report then says whether writes stay fast and memory stays flat: the p50 of the first
and of the last 10 % of writes (``write_growth``), the server's RSS after its first minute
and after the load (``server_rss_mib``, when the bench started the server) and the LanceDB
table's fragment and version counts at the end (``hot_table``).
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import psutil

from nmafc.bench import machine
from nmafc.bench.engine_bench import PEOPLE, TOPICS
from nmafc.bench.http_bench import _percentiles
from nmafc.testing.processes import NmafcProcess

# Settings that would point a started service at someone else's stores.
_FOREIGN = ("NMAFC_COLD_URI", "NMAFC_HOT_URI", "NMAFC_CONFIG", "NMAFC_API_KEYS", "NMAFC_DATA_DIR")


@dataclass(frozen=True, slots=True)
class LoadOptions:
    duration_s: float = 60.0
    writers: int = 4
    readers: int = 4
    url: str | None = None
    api_key: str | None = None
    agent: str = "load"
    timeout_s: float = 30.0
    run_id: str = field(default_factory=lambda: secrets.token_hex(4))
    writes: int | None = None  # stop after this many writes (duration_s is then a cap)
    new_share: float = 0.0  # share of writes that go to a conversation of their own


@dataclass(frozen=True, slots=True)
class Ack:
    """One acknowledged write: what must be retrievable afterwards."""

    token: str
    conversation: str
    memory_ids: tuple[str, ...]
    turn: float


@dataclass(frozen=True, slots=True)
class Outcome:
    """One request as the client saw it (``at``: seconds since the load started)."""

    op: str
    status: str
    ms: float
    at: float
    retry_after: str | None = None
    new_scope: bool = False

    @property
    def ok(self) -> bool:
        return self.status.startswith("2")


@dataclass
class LoadRun:
    """Everything a load run observed, for the report and for fault tests."""

    options: LoadOptions
    acks: list[Ack] = field(default_factory=list)
    attempted: dict[str, str] = field(default_factory=dict)  # token -> conversation
    outcomes: list[Outcome] = field(default_factory=list)
    started: float = 0.0  # time.perf_counter() when the load began (Outcome.at counts from it)
    elapsed_s: float = 0.0

    def statuses(self, op: str | None = None) -> Counter[str]:
        return Counter(o.status for o in self.outcomes if op is None or o.op == op)

    def missing_retry_after(self) -> int:
        """503 answers that did not say when to retry."""
        return sum(1 for o in self.outcomes if o.status == "503" and not o.retry_after)


@dataclass
class Verification:
    checked: int = 0
    lost: list[dict[str, Any]] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)


def conversation_of(options: LoadOptions, writer: int) -> str:
    return f"{options.run_id}-w{writer}"


def headers_for(options: LoadOptions, conversation: str | None = None) -> dict[str, str]:
    headers = {"X-Agent-ID": options.agent}
    if conversation:
        headers["X-Conversation-ID"] = conversation
    return headers


def http_client(url: str, options: LoadOptions, clients: int) -> httpx.AsyncClient:
    """One connection per client, bearer key if any, the per-request timeout."""
    auth = {"Authorization": f"Bearer {options.api_key}"} if options.api_key else {}
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    return httpx.AsyncClient(base_url=url, headers=auth, limits=limits, timeout=options.timeout_s)


async def _send(
    http: httpx.AsyncClient,
    op: str,
    started_at: float,
    method: str,
    path: str,
    *,
    json_body: Any = None,
    headers: Mapping[str, str],
) -> tuple[Outcome, httpx.Response | None]:
    began = time.perf_counter()
    response: httpx.Response | None = None
    try:
        response = await http.request(method, path, json=json_body, headers=dict(headers))
        status = str(response.status_code)
    except httpx.TimeoutException:
        status = "timeout"
    except httpx.TransportError:
        status = "connect_error"
    ms = (time.perf_counter() - began) * 1000
    retry_after = response.headers.get("retry-after") if response is not None else None
    outcome = Outcome(op, status, ms, round(began - started_at, 3), retry_after)
    return outcome, response


def _message(token: str, rng: random.Random) -> str:
    return (
        f"{rng.choice(PEOPLE)} said the {rng.choice(TOPICS)} code word is {token}, "
        "and I should remember it."
    )


async def drive(
    http: httpx.AsyncClient, options: LoadOptions, stop: asyncio.Event | None = None
) -> LoadRun:
    """Run writers and readers until ``duration_s`` passes (or ``stop`` is set)."""
    started = time.perf_counter()
    run = LoadRun(options, started=started)
    deadline = time.monotonic() + options.duration_s
    pause = 0.2  # back-off after a failed request, so an outage is not a busy loop

    issued = 0

    def going() -> bool:
        return time.monotonic() < deadline and not (stop is not None and stop.is_set())

    def may_write() -> bool:
        nonlocal issued
        if not going() or (options.writes is not None and issued >= options.writes):
            return False
        issued += 1
        return True

    async def writer(index: int) -> None:
        rng = random.Random(f"{options.run_id}-{index}")
        own = conversation_of(options, index)
        step = 0
        while may_write():
            token = f"tok{options.run_id}w{index}n{step}"
            fresh = rng.random() < options.new_share
            conversation = f"{own}-n{step}" if fresh else own
            step += 1
            body = {"messages": [{"role": "user", "content": _message(token, rng)}]}
            run.attempted[token] = conversation
            outcome, response = await _send(
                http, "write", started, "POST", "/v1/memories", json_body=body,
                headers=headers_for(options, conversation),
            )  # fmt: skip
            outcome = replace(outcome, new_scope=fresh)
            run.outcomes.append(outcome)
            if outcome.ok and response is not None:
                data = response.json()
                ids = tuple(m["id"] for m in data.get("added", []))
                run.acks.append(Ack(token, conversation, ids, float(data.get("turn", 0))))
            else:
                await asyncio.sleep(pause)

    async def reader(index: int) -> None:
        rng = random.Random(f"{options.run_id}-r{index}")
        while going() and (options.writes is None or issued < options.writes):
            if run.acks:
                ack = rng.choice(run.acks)
                query, conversation = f"What is the code word {ack.token}?", ack.conversation
            else:
                query = f"What did {rng.choice(PEOPLE)} say about {rng.choice(TOPICS)}?"
                conversation = conversation_of(options, rng.randrange(max(1, options.writers)))
            body = {"query": query, "reinforce": False}
            outcome, _ = await _send(
                http,
                "search",
                started,
                "POST",
                "/v1/memories/search",
                json_body=body,
                headers=headers_for(options, conversation),
            )
            run.outcomes.append(outcome)
            if not outcome.ok:
                await asyncio.sleep(pause)

    await asyncio.gather(
        *(writer(i) for i in range(options.writers)),
        *(reader(i) for i in range(options.readers)),
    )
    run.elapsed_s = time.perf_counter() - started
    return run


async def verify(
    http: httpx.AsyncClient, options: LoadOptions, acks: list[Ack], concurrency: int = 4
) -> Verification:
    """Check every acknowledged write: each memory by id, and its token by keyword search."""
    result = Verification()
    started = time.perf_counter()
    gate = asyncio.Semaphore(concurrency)

    async def check(ack: Ack) -> None:
        headers = headers_for(options, ack.conversation)
        problems: list[str] = []
        async with gate:
            for memory_id in ack.memory_ids:
                outcome, response = await _retrying(
                    http, "verify_get", started, "GET", f"/v1/memories/{memory_id}", None, headers
                )
                result.outcomes.append(outcome)
                if response is None or response.status_code != 200:
                    problems.append(f"GET {memory_id}: {outcome.status}")
                elif ack.token not in response.json().get("content", ""):
                    problems.append(f"GET {memory_id}: content lacks the token")
            body = {"query": ack.token, "reinforce": False, "top_k": 20}
            outcome, response = await _retrying(
                http, "verify_search", started, "POST", "/v1/memories/search", body, headers
            )
            result.outcomes.append(outcome)
            if response is None or response.status_code != 200:
                problems.append(f"search: {outcome.status}")
            elif not _found(response.json(), ack.token):
                problems.append("search: token not found")
        result.checked += 1
        if problems:
            result.lost.append({**asdict(ack), "problems": problems})

    await asyncio.gather(*(check(ack) for ack in acks))
    return result


async def _retrying(
    http: httpx.AsyncClient,
    op: str,
    started: float,
    method: str,
    path: str,
    body: Any,
    headers: Mapping[str, str],
    attempts: int = 5,
) -> tuple[Outcome, httpx.Response | None]:
    """A verification read; a 503 or a timeout is retried (only a definite answer counts)."""
    for attempt in range(attempts):
        outcome, response = await _send(
            http, op, started, method, path, json_body=body, headers=headers
        )
        if outcome.status not in ("503", "timeout", "connect_error") or attempt == attempts - 1:
            return outcome, response
        await asyncio.sleep(1.0)
    raise AssertionError("unreachable")


def _found(search: Mapping[str, Any], token: str) -> bool:
    hits = search.get("hits", [])
    return token in search.get("context", "") or any(token in h.get("content", "") for h in hits)


# -- the command ------------------------------------------------------------------------


def run(options: LoadOptions, out: Path | None = None, name: str = "load") -> dict[str, Any]:
    """Load, verify, report; writes ``<name>.json`` and ``<name>.md`` under ``out``."""
    if options.url:
        report = asyncio.run(_load_and_verify(options.url, options))
    else:
        with tempfile.TemporaryDirectory(prefix="nmafc-bench-load-") as data_dir:
            key = "bench-" + secrets.token_urlsafe(16)
            server = NmafcProcess(
                "serve",
                {
                    "NMAFC_DATA_DIR": data_dir,
                    "NMAFC_SERVER_LOG_LEVEL": "warning",
                    "NMAFC_API_KEYS": f"{key}:*",
                    # One agent is every client here: the per-agent cap would refuse most
                    # of them (429) and measure the cap, not the service. The cap has its
                    # own test (tests/faults/test_abuse.py).
                    "NMAFC_SERVER_AGENT_MAX_CONCURRENT": str(
                        4 * (options.writers + options.readers)
                    ),
                },
                # A file, not a pipe: a long run's warnings must never block the server.
                Path(data_dir) / "serve.log",
                drop=_FOREIGN,
            ).start(timeout_s=180)
            try:
                local = LoadOptions(**{**_fields(options), "api_key": key})
                assert server.process is not None
                probe = RssProbe(server.process.pid)
                report = asyncio.run(_load_and_verify(server.url, local, probe))
                report["hot_table"] = hot_table_shape(Path(data_dir) / "hot")
            finally:
                server.stop(timeout_s=30)
            report["service"] = "started: nmafc serve, embedded default (SQLite + LanceDB)"
            report["server_log"] = log_summary(server.log())
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.json").write_text(json.dumps(report, indent=2))
        (out / f"{name}.md").write_text(markdown(report))
    return report


class RssProbe:
    """Samples a process's resident memory every ``every_s`` while the load runs."""

    def __init__(self, pid: int, every_s: float = 2.0) -> None:
        self.process = psutil.Process(pid)
        self.every_s = every_s
        self.samples: list[tuple[float, float]] = []  # (seconds since start, MiB)
        self._started = time.monotonic()

    def sample(self) -> None:
        rss = self.process.memory_info().rss / 2**20
        self.samples.append((round(time.monotonic() - self._started, 1), round(rss, 1)))

    async def run(self) -> None:
        self._started = time.monotonic()
        while True:
            self.sample()
            await asyncio.sleep(self.every_s)

    def summary(self, first_s: float = 60.0) -> dict[str, Any]:
        """RSS after the first minute (a quarter of a shorter run) and at the end."""
        self.sample()
        end_at, end = self.samples[-1]
        mark = min(first_s, end_at / 4)
        at, early = next((t, mib) for t, mib in self.samples if t >= mark)
        return {
            "after_first_minute": early,
            "first_sample_at_s": at,
            "end": end,
            "end_at_s": end_at,
            "ratio": round(end / early, 3) if early else None,
            "peak": max(mib for _, mib in self.samples),
        }


def log_summary(log: str) -> dict[str, Any]:
    """Errors and warnings the started server logged (background services included)."""
    levels: Counter[str] = Counter()
    messages: Counter[str] = Counter()
    for line in log.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("level") in ("warning", "error", "critical"):
            levels[entry["level"]] += 1
            messages[str(entry.get("msg", ""))[:120]] += 1
    return {"levels": dict(levels), "top": dict(messages.most_common(5))}


def hot_table_shape(uri: Path, table: str = "memories") -> dict[str, int]:
    """Fragments and versions of the service's LanceDB table, counted by LanceDB."""
    import lancedb

    handle = lancedb.connect(str(uri)).open_table(table)
    stats: Any = handle.stats()
    return {
        "fragments": int(stats["fragment_stats"]["num_fragments"]),
        "versions": len(handle.list_versions()),
        "rows": int(handle.count_rows()),
    }


def _fields(options: LoadOptions) -> dict[str, Any]:
    return {name: getattr(options, name) for name in LoadOptions.__dataclass_fields__}


async def _load_and_verify(
    url: str, options: LoadOptions, probe: RssProbe | None = None
) -> dict[str, Any]:
    clients = options.writers + options.readers
    async with http_client(url, options, clients) as http:
        progress = asyncio.create_task(_progress(options))
        sampling = asyncio.create_task(probe.run()) if probe is not None else None
        try:
            load = await drive(http, options)
        finally:
            progress.cancel()
            if sampling is not None:
                sampling.cancel()
        rss = probe.summary() if probe is not None else None
        verification = await verify(http, options, load.acks)
    report = summarise(load, verification)
    report["server_rss_mib"] = rss
    return report


async def _progress(options: LoadOptions) -> None:
    started, duration_s = time.monotonic(), options.duration_s
    while True:
        await asyncio.sleep(min(30.0, max(5.0, duration_s / 10)))
        of = f"of {options.writes} writes" if options.writes else f"/{duration_s:.0f} s"
        print(f"  load: {time.monotonic() - started:.0f} s {of}", file=sys.stderr)


def summarise(load: LoadRun, verification: Verification) -> dict[str, Any]:
    """The JSON report of one run."""
    ops: dict[str, Any] = {}
    for op in ("write", "search", "verify_get", "verify_search"):
        outcomes = [o for o in (*load.outcomes, *verification.outcomes) if o.op == op]
        ok = [o.ms for o in outcomes if o.ok]
        ops[op] = {
            "requests": len(outcomes),
            "ok": len(ok),
            "latency_ms": _percentiles(ok),
            "statuses": dict(Counter(o.status for o in outcomes)),
        }
    for op in ("write", "search"):
        ops[op]["throughput_rps"] = (
            round(ops[op]["ok"] / load.elapsed_s, 1) if load.elapsed_s else 0
        )
    errors = Counter(o.status for o in load.outcomes if not o.ok)
    options = {**_fields(load.options), "api_key": None}
    writes = sorted((o for o in load.outcomes if o.op == "write" and o.ok), key=lambda o: o.at)
    return {
        "benchmark": "load",
        "options": options,
        "machine": machine.describe(),
        "duration_s": round(load.elapsed_s, 1),
        "ops": ops,
        "errors": dict(errors),
        "server_errors": sum(n for status, n in errors.items() if status.startswith("5")),
        "missing_retry_after": load.missing_retry_after(),
        "acknowledged": len(load.acks),
        "verified": verification.checked,
        "lost": len(verification.lost),
        "lost_writes": verification.lost[:50],
        "write_growth": {
            "all": growth(writes),
            "new_conversation": growth([o for o in writes if o.new_scope]),
            "loaded_conversation": growth([o for o in writes if not o.new_scope]),
        },
    }


def growth(writes: list[Outcome]) -> dict[str, Any]:
    """p50 of the first and of the last 10 % of ``writes`` (in start order), and their ratio."""
    tenth = len(writes) // 10
    if tenth == 0:
        return {"writes": len(writes), "first_p50_ms": None, "last_p50_ms": None, "ratio": None}
    first = statistics.median(o.ms for o in writes[:tenth])
    last = statistics.median(o.ms for o in writes[-tenth:])
    return {
        "writes": len(writes),
        "first_p50_ms": round(first, 1),
        "last_p50_ms": round(last, 1),
        "ratio": round(last / first, 3) if first else None,
    }


def markdown(report: dict[str, Any]) -> str:
    """A table per operation plus the verdict line."""
    ops = report["ops"]
    lines = [
        "| op | requests | ok | p50 ms | p95 ms | p99 ms | ok/s | statuses |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, op in ops.items():
        lat = op["latency_ms"]
        statuses = ", ".join(f"{k}: {v}" for k, v in sorted(op["statuses"].items()))
        lines.append(
            f"| {name} | {op['requests']} | {op['ok']} | {lat['p50']:.1f} | {lat['p95']:.1f} | "
            f"{lat['p99']:.1f} | {op.get('throughput_rps', '')} | {statuses} |"
        )
    o = report["options"]
    lines += [
        "",
        f"{o['writers']} writers + {o['readers']} readers for {report['duration_s']} s on a "
        f"{report['machine']['cpus']}-core machine shared with the server. "
        f"Errors during the load: {report['errors'] or 'none'}. "
        f"**lost = {report['lost']}/{report['acknowledged']}** acknowledged writes.",
        "",
        "| writes | count | p50 first 10 % ms | p50 last 10 % ms | last / first |",
        "|---|---:|---:|---:|---:|",
    ]
    for kind, g in report["write_growth"].items():
        lines.append(
            f"| {kind.replace('_', ' ')} | {g['writes']} | {g['first_p50_ms']} | "
            f"{g['last_p50_ms']} | {g['ratio']} |"
        )
    rss = report.get("server_rss_mib")
    if rss:
        lines += [
            "",
            f"Server RSS: {rss['after_first_minute']} MiB at {rss['first_sample_at_s']} s, "
            f"{rss['end']} MiB at the end ({rss['end_at_s']} s): **ratio {rss['ratio']}** "
            f"(peak {rss['peak']} MiB).",
        ]
    logged = report.get("server_log")
    if logged is not None:
        lines.append(f"Server log: {logged['levels'] or 'no warnings or errors'}.")
    hot = report.get("hot_table")
    if hot:
        lines.append(
            f"LanceDB table at the end: **{hot['fragments']} fragments, {hot['versions']} "
            f"versions**, {hot['rows']} rows."
        )
    return "\n".join(lines) + "\n"

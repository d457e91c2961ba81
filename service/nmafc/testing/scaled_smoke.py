"""Scaled mode on one machine, end to end (``make scaled-smoke``).

Starts what a scaled deployment runs — the Cold ROM in a fresh database on the local
PostgreSQL, the Hot store on a SeaweedFS S3 server on loopback, two ``nmafc serve``
replicas and one ``nmafc worker`` — then writes through one replica, reads through the
other, checks that every scope was maintained exactly once per interval across the three
processes, and tears it all down. Exits non-zero, with the logs' tails, on any failure.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

from nmafc.testing.processes import NmafcProcess
from nmafc.testing.seaweedfs import seaweedfs

ADMIN_KEY = "scaled-smoke-admin"
AGENT = "smoke-agent"
EVERY_TURNS = 3
PASS_LINE = "maintained a scope"


@dataclass(frozen=True)
class SmokeReport:
    scopes: int
    rounds: int
    passes_by_process: dict[str, int]
    seconds: float

    @property
    def passes(self) -> int:
        return sum(self.passes_by_process.values())


def ensure_postgres(admin_url: str) -> None:
    """Start the machine's PostgreSQL cluster if it is down (as ``.ci/run`` does)."""
    probe = ["pg_isready", "-h", "127.0.0.1", "-p", "5432", "-q"]
    if subprocess.run(probe, check=False).returncode == 0:
        return
    clusters = sorted(Path("/etc/postgresql").iterdir())
    cluster = ["pg_ctlcluster", "--skip-systemctl-redirect", clusters[0].name, "main", "start"]
    subprocess.run(cluster, check=True)
    for _ in range(30):
        if subprocess.run(probe, check=False).returncode == 0:
            return
        time.sleep(1)
    raise RuntimeError(f"PostgreSQL did not start ({admin_url})")


@contextmanager
def scratch_database(admin_url: str) -> Iterator[str]:
    """A new, empty database on the server of ``admin_url``, dropped afterwards."""
    name = f"nmafc_smoke_{uuid.uuid4().hex[:10]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def run_scaled_smoke(
    work: Path,
    admin_url: str = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
    scopes: int = 4,
    rounds: int = 2,
) -> SmokeReport:
    started = time.monotonic()
    ensure_postgres(admin_url)
    with ExitStack() as stack:
        cold_uri = stack.enter_context(scratch_database(admin_url))
        s3 = stack.enter_context(seaweedfs(work / "seaweedfs", bucket="nmafc-smoke"))
        common = {
            "NMAFC_COLD_URI": cold_uri,
            **s3.env(f"smoke-{uuid.uuid4().hex[:8]}"),
            "NMAFC_API_KEYS": f"{ADMIN_KEY}:*",
            "NMAFC_AUTH": "on",
            # One fact per message, so what replica 2 must find is exactly what was sent.
            "NMAFC_EXTRACTOR": "verbatim",
            "NMAFC_CONSOLIDATION_EVERY_TURNS": str(EVERY_TURNS),
            "NMAFC_MAINTENANCE_PASS_ENABLED": "true",
            "NMAFC_MAINTENANCE_PASS_INTERVAL_S": "0.2",
            "NMAFC_MAINTENANCE_COMPACTION_ENABLED": "false",
            "NMAFC_SERVER_LOG_FORMAT": "text",
        }
        processes = {
            name: NmafcProcess(command, {**common, "NMAFC_DATA_DIR": str(work / name)},
                               work / f"{name}.log")
            for name, command in (("replica-1", "serve"), ("replica-2", "serve"),
                                  ("worker", "worker"))
        }  # fmt: skip
        for process in processes.values():
            stack.callback(process.stop)
        try:
            for process in processes.values():
                process.start()
            _exercise(processes["replica-1"].url, processes["replica-2"].url, processes,
                      scopes, rounds)  # fmt: skip
        except BaseException:
            for name, process in processes.items():
                print(f"--- {name} log (tail)\n{process.log()[-2500:]}", file=sys.stderr)
            raise
        finally:
            for process in processes.values():
                process.stop()
        passes = {name: process.log().count(PASS_LINE) for name, process in processes.items()}
    report = SmokeReport(scopes, rounds, passes, time.monotonic() - started)
    if report.passes != scopes * rounds:
        raise AssertionError(
            f"expected {scopes * rounds} maintenance passes (each scope once per interval), "
            f"saw {report.passes}: {passes}"
        )
    return report


def _exercise(
    writer_url: str,
    reader_url: str,
    processes: dict[str, NmafcProcess],
    scopes: int,
    rounds: int,
) -> None:
    headers = {"Authorization": f"Bearer {ADMIN_KEY}", "X-Agent-ID": AGENT}
    conversations = [f"c{i}" for i in range(scopes)]
    with (
        httpx.Client(headers=headers, timeout=60) as writer,
        httpx.Client(headers=headers, timeout=60) as reader,
    ):
        for round_ in range(rounds):
            for conversation in conversations:
                facts = _facts(conversation, round_)
                response = writer.post(
                    f"{writer_url}/v1/memories",
                    json={"messages": [{"role": "user", "content": f} for f in facts]},
                    headers={"X-Conversation-ID": conversation},
                )
                response.raise_for_status()
            _wait_for_passes(processes, scopes * (round_ + 1))
        for conversation in conversations:
            scope = {"X-Conversation-ID": conversation}
            listed = reader.get(f"{reader_url}/v1/memories", params={"limit": 100}, headers=scope)
            listed.raise_for_status()
            contents = " ".join(item["content"] for item in listed.json()["items"])
            written = [f for r in range(rounds) for f in _facts(conversation, r)]
            missing = [fact for fact in written if fact not in contents]
            if missing:
                raise AssertionError(f"replica-2 lacks what replica-1 wrote: {missing}")
            found = reader.post(
                f"{reader_url}/v1/memories/search",
                json={"query": "Which boat is kept at the lake?", "reinforce": False},
                headers=scope,
            )
            found.raise_for_status()
            if "kayak" not in found.json()["context"]:
                raise AssertionError(
                    f"replica-2's search missed replica-1's write in {conversation}"
                )
    time.sleep(1.0)  # a duplicate pass would land now: the intervals are 0.2 s


FACTS = (
    "{who} keeps a red kayak at the lake.",
    "{who} learned Portuguese while living in Lisbon.",
    "{who} is allergic to walnuts.",
    "{who} plays the cello in a community orchestra.",
    "{who} drives an old green pickup truck.",
    "{who} volunteers at the animal shelter on Sundays.",
    "{who} collects vintage postage stamps.",
    "{who} runs a small bakery downtown.",
    "{who} grows tomatoes on the balcony.",
)


def _facts(conversation: str, round_: int) -> list[str]:
    """Distinct facts (never merged as near-duplicates), EVERY_TURNS per round."""
    start = round_ * EVERY_TURNS
    picked = [FACTS[(start + n) % len(FACTS)] for n in range(EVERY_TURNS)]
    return [fact.format(who=f"Member {conversation}") for fact in picked]


def _wait_for_passes(processes: dict[str, NmafcProcess], expected: int) -> None:
    deadline = time.monotonic() + 90
    while sum(p.log().count(PASS_LINE) for p in processes.values()) < expected:
        if time.monotonic() > deadline:
            raise AssertionError(f"maintenance did not reach {expected} passes in 90 s")
        time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
                        help="an admin URL on the PostgreSQL server to use")  # fmt: skip
    parser.add_argument("--scopes", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="nmafc-scaled-") as work:
        report = run_scaled_smoke(Path(work), args.postgres, args.scopes, args.rounds)
    by_process = ", ".join(f"{k}={v}" for k, v in report.passes_by_process.items())
    print(
        f"scaled smoke ok in {report.seconds:.1f}s: 2 replicas + 1 worker on PostgreSQL + "
        f"SeaweedFS S3; {report.scopes} scopes x {report.rounds} intervals = "
        f"{report.passes} maintenance passes ({by_process})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run ``nmafc bench load``'s writers and readers in the background while a test breaks things."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from nmafc.bench.load_bench import (
    LoadOptions,
    LoadRun,
    Verification,
    drive,
    http_client,
    verify,
)


class BackgroundLoad:
    """Writers and readers against ``url`` on their own thread and event loop."""

    def __init__(self, url: str, options: LoadOptions) -> None:
        self.url = url
        self.options = options
        self.run: LoadRun | None = None
        self.error: BaseException | None = None
        self.started = time.perf_counter()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._main, name="fault-load", daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            self.run = asyncio.run(self._drive())
        except BaseException as exc:  # surfaced by result()
            self.error = exc

    async def _drive(self) -> LoadRun:
        clients = self.options.writers + self.options.readers
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with http_client(self.url, self.options, clients) as http:
            return await drive(http, self.options, self._stop)

    def stop(self) -> None:
        """End the load now (each client finishes its request in flight)."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)

    def since_start(self) -> float:
        """Seconds since the load began, on the clock of ``Outcome.at``."""
        return time.perf_counter() - self.started  # drive() starts within milliseconds

    def result(self, timeout: float = 120) -> LoadRun:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the load did not finish"
        if self.error is not None:
            raise self.error
        assert self.run is not None
        return self.run


def verify_acks(url: str, run: LoadRun) -> Verification:
    """The bench's verification pass: every acknowledged write, by id and by keyword."""
    options = replace(run.options)

    async def main() -> Verification:
        async with http_client(url, options, 8) as http:
            return await verify(http, options, run.acks)

    verification = asyncio.run(main())
    _report(run, verification)
    return verification


def _report(run: LoadRun, verification: Verification) -> None:
    """Each fault test's counts, kept as an artifact (docs/operations.md quotes them)."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "fault").split(" ")[0]
    name = test.split("::")[-1]
    out = Path(__file__).resolve().parents[2] / "test-artifacts" / "faults" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "test": test,
        "requests": len(run.outcomes),
        "statuses": dict(sorted(run.statuses().items())),
        "acknowledged_writes": len(run.acks),
        "verified": verification.checked,
        "lost": len(verification.lost),
    }
    out.write_text(json.dumps(report, indent=2) + "\n")


def stats(url: str, agent: str, conversation: str) -> dict[str, Any]:
    """``GET /v1/stats`` of one conversation (records per tier, turns, Hot rows)."""
    headers = {"X-Agent-ID": agent, "X-Conversation-ID": conversation}
    response = httpx.get(f"{url}/v1/stats", headers=headers, timeout=30)
    response.raise_for_status()
    body: dict[str, Any] = response.json()
    return body


def hot_matches_cold(url: str, agent: str, conversation: str) -> tuple[int, int]:
    """(valid records in the Cold ROM, live rows in Hot) of one conversation."""
    body = stats(url, agent, conversation)
    return sum(body["records"].values()), int(body["hot_rows"])

"""SIGTERM stops ``nmafc serve`` within 30 s, with a long write in flight, on 1 or 2 workers.

The write (1,000 long facts, minutes of embedding here) is told to stop at its next step
once the graceful period is over; not yet committed, it commits nothing.
"""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx
import psutil
import pytest

from nmafc.testing.processes import NmafcProcess

from .big_write import big_write_body

pytestmark = pytest.mark.faults
STOPPED_WITHIN_S = 30.0


@pytest.mark.parametrize("workers", [2, 1])
def test_sigterm_with_a_long_write_in_flight_stops_within_30_s(
    tmp_path: Path, workers: int
) -> None:
    env = {
        "NMAFC_DATA_DIR": str(tmp_path / "data"),
        "NMAFC_HOT_PRELOAD_SCOPES": "0",
        "NMAFC_SERVER_WORKERS": str(workers),
        "NMAFC_SERVER_REQUEST_TIMEOUT_S": "900",
    }
    # Workers start one after the other on a busy 2-core machine: give them time.
    service = NmafcProcess("serve", env, tmp_path / "serve.log").start(timeout_s=300)
    try:
        assert service.process is not None
        family = [psutil.Process(service.process.pid)]
        family += family[0].children(recursive=True)
        answers: list[object] = []

        def write() -> None:
            try:
                answers.append(
                    httpx.post(
                        f"{service.url}/v1/memories",
                        content=big_write_body(),
                        headers={"X-Agent-ID": "big", "Content-Type": "application/json"},
                        timeout=300,
                    )
                )
            except httpx.HTTPError as exc:
                answers.append(exc)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        time.sleep(5.0)  # the body is in and being embedded
        assert not answers, answers
        started = time.monotonic()
        service.process.send_signal(signal.SIGTERM)
        gone, alive = psutil.wait_procs(family, timeout=STOPPED_WITHIN_S + 5)
        took = time.monotonic() - started
        assert not alive, f"still running {took:.0f} s after SIGTERM: {alive}"
        assert took <= STOPPED_WITHIN_S, f"stopping took {took:.1f} s"
        writer.join(30)
    finally:
        service.kill()
    restarted = NmafcProcess("serve", {**env, "NMAFC_SERVER_WORKERS": "1"}, tmp_path / "again.log")
    restarted.start(timeout_s=300)
    try:
        listed = httpx.get(
            f"{restarted.url}/v1/memories", headers={"X-Agent-ID": "big"}, timeout=30
        )
        assert listed.json()["items"] == []  # the stopped write committed nothing
    finally:
        restarted.stop()

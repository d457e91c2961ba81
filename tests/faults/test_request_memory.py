"""A request's memory is bounded in proportion to its body (docs/operations.md, *Request limits*).

A 3.7 MB write of 1,000 long facts against a real ``nmafc serve``: its peak RSS growth
stays under ``PEAK_FACTOR`` times the body, and what is left after it is under
``RETAINED_FACTOR`` times. Before embedding batches were bounded by padded tokens (and
ONNX Runtime's arena kept its largest block), one such write added ~640 MiB for good
(~180x the body). The write's deadline is short: the bound is on memory, not on time,
and the first batches are where the peak was.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from nmafc.testing.processes import NmafcProcess

from .big_write import PeakRss, big_write_body

pytestmark = pytest.mark.faults
PEAK_FACTOR = 100  # measured 45 and 64 (docs/operations.md); 180 before
RETAINED_FACTOR = 40  # measured 16 and 19; 180 before


def _settled(rss: PeakRss, within_s: float = 40.0) -> int:
    """RSS once the work is over: the lowest sample in a window past one trim interval.

    A write answered 503 at its deadline may still be finishing its current embedding
    batch on a worker thread (deadlines stop work at the next step), and free pages go
    back to the kernel at the next trim (NMAFC_SERVER_MALLOC_TRIM_S, 30 s): what is left
    for good is what stays after both.
    """
    lowest = rss.now()
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        time.sleep(0.5)
        lowest = min(lowest, rss.now())
    return lowest


def test_a_big_write_grows_memory_in_proportion_to_its_body(tmp_path: Path) -> None:
    env = {
        "NMAFC_DATA_DIR": str(tmp_path / "data"),
        "NMAFC_HOT_PRELOAD_SCOPES": "0",
        "NMAFC_SERVER_REQUEST_TIMEOUT_S": "20",
    }
    service = NmafcProcess("serve", env, tmp_path / "serve.log").start()
    try:
        assert service.process is not None
        body = big_write_body()
        with httpx.Client(base_url=service.url, timeout=300) as http:
            warm = {"facts": [{"content": "I like tea."}]}
            assert http.post("/v1/memories", json=warm, headers={"X-Agent-ID": "w"}).is_success
            with PeakRss(service.process.pid) as rss:
                base = rss.now()
                answer = http.post(
                    "/v1/memories",
                    content=body,
                    headers={"X-Agent-ID": "big", "Content-Type": "application/json"},
                )
                after = _settled(rss)
        assert answer.status_code in (201, 503), answer.text
        peak_factor = (rss.peak - base) / len(body)
        retained_factor = (after - base) / len(body)
        print(f"body {len(body)} B: peak +{(rss.peak - base) >> 20} MiB ({peak_factor:.0f}x), "
              f"retained +{(after - base) >> 20} MiB ({retained_factor:.0f}x)")  # fmt: skip
        assert peak_factor < PEAK_FACTOR
        assert retained_factor < RETAINED_FACTOR
    finally:
        service.stop()

"""``kill -9`` of ``nmafc serve`` during a burst of concurrent adds, then a restart.

Every write is all-or-nothing: after the restart each attempted token is either absent or
fully there (its memory, its turn, its add event, keyword-searchable), every acknowledged
one is there, and the Hot store holds exactly the Cold ROM's records.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from nmafc.bench.load_bench import LoadOptions, conversation_of
from nmafc.testing.processes import NmafcProcess

from .conftest import VERBATIM
from .load import BackgroundLoad, stats, verify_acks

pytestmark = pytest.mark.faults
WRITERS = 8


def test_kill_9_mid_burst_leaves_no_partial_record(
    tmp_path: Path, nmafc_processes: Callable[[dict[str, str]], NmafcProcess]
) -> None:
    service = nmafc_processes({**VERBATIM, "NMAFC_DATA_DIR": str(tmp_path / "data")}).start()
    options = LoadOptions(duration_s=60, writers=WRITERS, readers=0, timeout_s=30)
    load = BackgroundLoad(service.url, options)
    time.sleep(3.0)
    service.kill()  # SIGKILL with requests in flight
    load.stop()
    run = load.result()
    assert run.acks, "nothing was acknowledged before the kill"
    assert run.statuses()["connect_error"] >= 1  # some requests were cut mid-flight

    service.start()  # same data dir, same port
    verification = verify_acks(service.url, run)
    assert verification.checked == len(run.acks)
    assert verification.lost == []

    acked = {ack.token for ack in run.acks}
    headers = {"X-Agent-ID": options.agent}
    for writer in range(WRITERS):
        conversation = conversation_of(options, writer)
        scoped = {**headers, "X-Conversation-ID": conversation}
        page = httpx.get(
            f"{service.url}/v1/memories", params={"limit": 500}, headers=scoped, timeout=30
        ).json()
        tokens = set()
        for memory in page["items"]:
            token = next(w for w in memory["content"].split() if w.startswith("tok"))
            assert run.attempted.get(token.rstrip(",")) == conversation
            assert memory["source_turn_ids"], memory
            tokens.add(token.rstrip(","))
        assert page["next_cursor"] is None
        # Present is whole: one turn, one fact, one add event per write, and Hot == Cold.
        body = stats(service.url, options.agent, conversation)
        assert body["turns"] == len(tokens) == sum(body["records"].values())
        assert body["events"].get("add", 0) == len(tokens)
        assert body["hot_rows"] == len(tokens)
        assert {t for t in acked if run.attempted[t] == conversation} <= tokens
    unacked = set(run.attempted) - acked
    assert unacked, "no write was in flight at the kill"

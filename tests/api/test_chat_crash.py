"""A ``kill -9`` between replying and remembering loses nothing: ``nmafc serve`` as a real
process, the official ``openai`` SDK as the client, a fake upstream on loopback."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from ..providers.fakes import FakeUpstream, free_port, running_upstream


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream("openai") as fake:
        yield fake


def start(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(
        [sys.executable, "-m", "nmafc.cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while True:
        assert server.poll() is None, server.stdout.read().decode() if server.stdout else ""
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "nmafc serve did not become ready"
        time.sleep(0.2)


def counts(data_dir: Path) -> tuple[int, int, int]:
    """(turns, exchanges still queued, exchanges remembered) read straight from the Cold ROM."""
    with sqlite3.connect(data_dir / "cold.db") as db:
        turns = db.execute("SELECT count(*) FROM turns").fetchone()[0]
        queued = db.execute(
            "SELECT count(*) FROM pending_exchanges WHERE done_at IS NULL"
        ).fetchone()[0]
        done = db.execute(
            "SELECT count(*) FROM pending_exchanges WHERE done_at IS NOT NULL"
        ).fetchone()[0]
    return int(turns), int(queued), int(done)


def test_a_kill_during_the_remember_step_loses_nothing(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    env = {
        **os.environ,
        "NMAFC_DATA_DIR": str(tmp_path),
        "NMAFC_CONFIG": "",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),  # no per-user config file
        "NMAFC_EXTRACTOR": "verbatim",
        "NMAFC_LLM_PROVIDER": "openai",
        "NMAFC_LLM_BASE_URL": upstream.url,
        "NMAFC_LLM_MODEL": "fake-model",
        "NMAFC_LLM_API_KEY": "upstream-secret",
        "NMAFC_MAINTENANCE_PASS_ENABLED": "false",
        "NMAFC_MAINTENANCE_COMPACTION_ENABLED": "false",
        # Remembering waits a minute after the reply: the kill lands inside that window.
        "NMAFC_CHAT_QUEUE_DELAY_S": "60",
    }
    port = free_port()
    upstream.reply({"text": "Noted, the wedding is on 12 June."})
    server = start(env, port)
    try:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        reply = client.chat.completions.create(
            model="fake-model",
            messages=[{"role": "user", "content": "My sister's wedding is on 12 June in Braga."}],
            extra_headers={"X-Agent-ID": "crash-agent", "X-Conversation-ID": "c1"},
        )
        client.close()
        assert reply.choices[0].message.content == "Noted, the wedding is on 12 June."
        assert counts(tmp_path) == (0, 1, 0)  # acknowledged: queued, not yet remembered
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    assert server.returncode == -signal.SIGKILL

    server = start({**env, "NMAFC_CHAT_QUEUE_DELAY_S": "0"}, port)
    try:
        deadline = time.monotonic() + 60
        while counts(tmp_path)[1]:
            assert time.monotonic() < deadline, "the queued exchange was not remembered"
            time.sleep(0.1)
        assert counts(tmp_path) == (2, 0, 1)  # user + assistant turns, remembered once
        listed = httpx.get(
            f"http://127.0.0.1:{port}/v1/memories",
            headers={"X-Agent-ID": "crash-agent", "X-Conversation-ID": "c1"},
        ).json()
        contents = " ".join(item["content"] for item in listed["items"])
        assert "wedding is on 12 June in Braga" in contents
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=60)

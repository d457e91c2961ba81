"""`nmafc serve | keys | openapi | settings | bench http` as a user runs them."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from nmafc.bench.http_bench import HttpBenchOptions, run
from nmafc.cli.main import main

from ..needs import missing

ROOT = Path(__file__).parents[2]


DATED_LINE = re.compile(r"\d{1,2} [A-Z][a-z]+ \d{4}(?: · turn \d|:)")


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("NMAFC_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("NMAFC_DATA_DIR", str(tmp_path))
    return tmp_path


def test_keys_are_created_listed_and_revoked(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "--agent", "support-bot", "--name", "ci"]) == 0
    created = capsys.readouterr().out
    secret = created.strip().splitlines()[-1]
    assert secret.startswith("nmafc_")
    assert "agent support-bot" in created
    assert main(["keys", "create", "--admin"]) == 0
    capsys.readouterr()
    assert main(["keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert secret[:14] in listing
    assert secret not in listing
    assert "* (admin)" in listing
    assert main(["keys", "revoke", secret[:14]]) == 0
    capsys.readouterr()
    assert main(["keys", "list", "--agent", "support-bot"]) == 0
    assert secret[:14] not in capsys.readouterr().out
    assert main(["keys", "revoke", "nmafc_unknown"]) == 1


def test_openapi_prints_the_committed_document(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["openapi"]) == 0
    assert capsys.readouterr().out == (ROOT / "openapi" / "openapi.json").read_text()


def test_the_settings_dump_hides_keys_and_pepper(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NMAFC_API_KEYS", "very-secret-1:agent-a")
    monkeypatch.setenv("NMAFC_API_KEY_PEPPER", "very-secret-pepper")
    monkeypatch.setenv("NMAFC_AUTH", "on")
    assert main(["settings"]) == 0
    out = capsys.readouterr().out
    assert '"auth": "on"' in out
    assert "very-secret" not in out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_answers_the_readme_walkthrough_verbatim(data_dir: Path) -> None:
    if shutil.which("curl") is None:
        missing("curl (the README walkthrough uses it)", "apt-get install -y curl")
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"in another shell:\n\n```bash\n(.*?)```", readme, re.S)
    assert block, "README.md lacks the curl walkthrough"
    port = _free_port()
    # The one substitution: the port this test's server listens on.
    script = block.group(1).replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    env = {**os.environ, "NMAFC_API_KEYS": "demo-secret:support-bot"}
    server = subprocess.Popen(
        [sys.executable, "-m", "nmafc.cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stdout.read().decode() if server.stdout else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "nmafc serve did not become ready"
            time.sleep(0.3)
        walk = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script], capture_output=True, text=True, timeout=120
        )
        assert walk.returncode == 0, walk.stderr
        out = walk.stdout
        assert "shellfish" in out
        assert DATED_LINE.search(out)  # the context is dated memory
        # History: the add, the search's use of the fact (it answered the question), the edit.
        assert "['add', 'reinforce', 'update']" in out
        assert '"removed":1' in out  # rollback undid the second message
        assert '"scope":"support-bot/alice"' in out  # purge receipt
        denied = httpx.get(f"http://127.0.0.1:{port}/v1/stats", headers={"X-Agent-ID": "x"})
        assert denied.status_code == 401
    finally:
        server.send_signal(signal.SIGINT)
        output = server.communicate(timeout=60)[0].decode()
    assert server.returncode == 0, output[-2000:]
    assert "docs       http://127.0.0.1" in output
    assert "demo-secret" not in output


def test_bench_http_smoke(data_dir: Path, tmp_path: Path) -> None:
    # One scope count, both worker counts: each row starts a server (the slowest part of
    # the suite when it ran four); the sweep over scopes is the same loop.
    options = HttpBenchOptions(
        records=200, scopes=[20], clients=4, duration_s=1.5, workers=[1, 2], settle_s=0.5
    )
    report = run(options, tmp_path / "out")
    assert [(r["scopes"], r["workers"]) for r in report["results"]] == [(20, 1), (20, 2)]
    for result in report["results"]:
        assert result["errors"] == 0
        assert result["requests"] > 0
        assert result["latency_ms"]["p99"] > 0
        # Read from the server's own /metrics before and after the window.
        assert result["server_cpu"]["ms_per_search"] > 0
        assert 0 < result["server_cpu"]["cores"] <= (os.cpu_count() or 1) + 0.5
        assert result["server_rss_mb"] > 100  # the embedding model alone is ~300 MB
        assert result["client_cpu_ms_per_request"] > 0
    markdown = (tmp_path / "out" / "http.md").read_text()
    assert markdown.startswith("| records |")
    assert f"{os.cpu_count()}-core " in markdown  # the host is named: its SIMD sets matter


def test_the_worker_runs_maintenance_alone_and_stops_on_sigint(data_dir: Path) -> None:
    from nmafc.core.scope import Scope
    from nmafc.core.turns import Message
    from nmafc.engine.engine import MemoryEngine
    from nmafc.settings import Settings

    settings = Settings(extractor="verbatim", consolidation={"every_turns": 2})
    engine = MemoryEngine.open(settings)
    scope = Scope("agent-w", "c")
    try:
        engine.remember(scope, [Message("one"), Message("two")])
        assert engine.maintenance_due(scope)
    finally:
        engine.close()
    env = {
        **os.environ,
        "NMAFC_EXTRACTOR": "verbatim",
        "NMAFC_CONSOLIDATION_EVERY_TURNS": "2",
        "NMAFC_MAINTENANCE_PASS_INTERVAL_S": "0.2",
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "nmafc.cli.main", "worker"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            assert worker.poll() is None
            check = MemoryEngine.open(settings)
            try:
                if not check.maintenance_due(scope):
                    break
            finally:
                check.close()
            assert time.monotonic() < deadline, "the worker never maintained the scope"
            time.sleep(0.5)
    finally:
        worker.send_signal(signal.SIGINT)
        output = worker.communicate(timeout=60)[0].decode()
    assert worker.returncode == 0, output[-2000:]
    assert "background service maintenance: every 0.2s" in output


def _workers_of(pid: int) -> list[int]:
    """The spawned worker processes of a server process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in status and b"spawn_main" in cmdline:
            found.append(int(entry.name))
    return sorted(found)


def _fresh(port: int) -> httpx.Client:
    """A new connection each time, so requests land on whichever worker accepts them."""
    return httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        headers={"Authorization": "Bearer k", "X-Agent-ID": "a", "X-Conversation-ID": "c"},
        timeout=60,
    )


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_serve_with_workers_shares_the_embedded_stores_across_processes(data_dir: Path) -> None:
    port = _free_port()
    env = {**os.environ, "NMAFC_API_KEYS": "k:*", "NMAFC_SERVER_LOG_LEVEL": "warning"}
    server = subprocess.Popen(
        [sys.executable, "-m", "nmafc.cli.main", "serve", "--port", str(port), "--workers", "2"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while len(_workers_of(server.pid)) < 2 or not _ready(port):
            assert server.poll() is None, server.stdout.read().decode() if server.stdout else ""
            assert time.monotonic() < deadline, "nmafc serve --workers 2 did not become ready"
            time.sleep(0.3)
        workers = _workers_of(server.pid)
        animals = ["otter", "heron", "badger", "lynx", "marten", "ibis"]
        for animal in animals:
            with _fresh(port) as http:
                added = http.post(
                    "/v1/memories", json={"facts": [{"content": f"Ana saw a {animal}"}]}
                )
                assert added.status_code == 201, added.text
        # Whichever worker answers, it sees every write, including the other worker's.
        for animal in animals:
            with _fresh(port) as http:
                found = http.post("/v1/memories/search", json={"query": f"{animal}?"}).json()
                assert animal in found["context"]
        with _fresh(port) as http:
            metrics = http.get("/metrics").text
        adds = re.search(r'nmafc_http_requests_total\{method="POST",route="/v1/memories",'
                         r'status="201"\} (\S+)', metrics)  # fmt: skip
        assert adds is not None
        assert float(adds.group(1)) == len(animals)  # summed over the workers
        os.kill(workers[0], signal.SIGKILL)
        while workers[0] in _workers_of(server.pid) or len(_workers_of(server.pid)) < 2:
            assert time.monotonic() < deadline + 120, "the killed worker was not replaced"
            time.sleep(0.3)
        for _ in range(4):  # a request on either worker, the new one included
            with _fresh(port) as http:
                listed = http.get("/v1/memories").json()
                assert len(listed["items"]) == len(animals)
    finally:
        server.send_signal(signal.SIGINT)
        output = server.communicate(timeout=60)[0].decode()
    assert server.returncode == 0, output[-2000:]
    assert "workers    2 processes" in output


def _ready(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def test_an_empty_data_dir_variable_means_the_default_never_the_current_folder(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nmafc.settings import load_settings

    monkeypatch.setenv("NMAFC_DATA_DIR", "")
    settings = load_settings()
    assert settings.data_dir is None
    assert settings.resolved_data_dir().is_absolute()
    assert settings.resolved_data_dir() != Path.cwd()

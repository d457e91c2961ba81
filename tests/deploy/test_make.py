"""The README's two commands on a fresh machine: ``make run`` and ``make test``.

``make run`` installs only what serving needs and serves the API even where npm is
missing; ``make test`` names the tools its tests need beyond ``.venv`` and, under
``CI=true``, stops when one is missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from nmafc.testing.seaweedfs import free_port

from ..needs import missing

ROOT = Path(__file__).resolve().parents[2]


def make() -> str:
    found = shutil.which("make")
    if found is None:
        missing("make", "apt-get install -y make")
    return found


def dry_run(*args: str, env: dict[str, str] | None = None) -> str:
    """What ``make -n`` would run (recursive makes run, in dry-run mode too)."""
    done = subprocess.run(
        [make(), "-n", *args], cwd=ROOT, capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_run_installs_the_package_alone_not_the_dev_toolchain(tmp_path: Path) -> None:
    commands = dry_run("run", f"VENV={tmp_path / 'venv'}")
    installs = [line for line in commands.splitlines() if "pip install" in line]
    assert any("install --quiet -e . " in f"{line} " for line in installs), commands
    assert "[dev]" not in commands, commands
    assert f"{tmp_path / 'venv'}/bin/nmafc serve" in commands


def test_make_test_installs_the_dev_toolchain_and_checks_the_tools(tmp_path: Path) -> None:
    commands = dry_run("test", f"VENV={tmp_path / 'venv'}")
    assert "-e '.[dev]'" in commands
    for tool in ("strace", "curl", "chromium", "docker-compose", "pg_isready"):
        assert tool in commands, (tool, commands)
    assert '"$CI" = "true"' in commands  # a missing tool stops the CI run


def test_without_npm_make_run_serves_the_api_and_says_how_to_get_the_dashboard(
    tmp_path: Path,
) -> None:
    # PATH is an empty folder: no npm (nor anything else) can be found; the recipe needs
    # only the shell's builtins and the venv's absolute paths.
    empty = tmp_path / "bin"
    empty.mkdir()
    stamp = tmp_path / "installed-serve"
    stamp.touch()  # this venv has the package already; newer than pyproject.toml
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("NMAFC_")},
        "PATH": str(empty),
        "NMAFC_DATA_DIR": str(tmp_path / "data"),
        "NMAFC_CACHE_DIR": os.environ.get("NMAFC_CACHE_DIR", str(tmp_path / "cache")),
        "NMAFC_SERVER_PORT": str(port),
        "NMAFC_CONFIG": "",
    }
    # The UI export may be present in this checkout; the hint is printed only without it.
    export = "UI_EXPORT=" + str(tmp_path / "no-export" / "index.html")
    log = tmp_path / "make-run.log"
    with log.open("wb") as out:
        running = subprocess.Popen(
            [make(), "run", f"VENV={Path(sys.prefix)}", f"SERVE_STAMP={stamp}", export],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: make, sh and nmafc serve
        )
    try:
        deadline = time.monotonic() + 180
        while True:
            assert running.poll() is None, log.read_text()
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        added = httpx.post(
            f"http://127.0.0.1:{port}/v1/memories",
            json={"messages": [{"content": "Served without npm."}]},
            headers={"X-Agent-ID": "make-run"},
            timeout=60,
        )
        assert added.status_code == 201, added.text
    finally:
        os.killpg(running.pid, signal.SIGINT)
        try:
            running.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(running.pid, signal.SIGKILL)
            running.wait()
    said = log.read_text()
    assert "npm not found: serving the API without the dashboard" in said
    assert "make ui" in said

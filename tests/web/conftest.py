"""A real ``nmafc serve`` with the demo loaded, and headless Chromium (Debian's) to look at it.

The service runs as a user starts it, in a subprocess on a free port over a temporary
data directory; ``nmafc demo --url`` fills the demo scope through the HTTP API. Chromium
is the system one (``apt-get install chromium``): Playwright's own download fails here.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from nmafc.web import BUILD_HINT, dashboard_built

from ..needs import missing

ROOT = Path(__file__).parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("NMAFC_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
DEMO = {"X-Agent-ID": "demo", "X-Conversation-ID": "maya-and-sam"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Service:
    """A running ``nmafc serve``: its base URL, its output so far, and an HTTP client."""

    url: str
    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def api(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)


def _clean_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NMAFC_")}
    env.update(NMAFC_DATA_DIR=str(data_dir), NMAFC_SERVER_LOG_LEVEL="warning", **extra)
    return env


def start_service(data_dir: Path, **env: str) -> Service:
    """``nmafc serve`` on a free port; returns once ``/readyz`` answers."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "nmafc.cli.main", "serve", "--port", str(port)],
        env=_clean_env(data_dir, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    service = Service(f"http://127.0.0.1:{port}", process)
    # Read the output as it comes, so a chatty server never blocks on a full pipe.
    reader = threading.Thread(target=lambda: service.lines.extend(process.stdout or ()))
    reader.daemon = True
    reader.start()
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, f"nmafc serve exited:\n{service.output}"
        try:
            if httpx.get(f"{service.url}/readyz", timeout=2).status_code == 200:
                return service
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, f"nmafc serve is not ready:\n{service.output}"
        time.sleep(0.1)


def stop_service(service: Service) -> None:
    service.process.send_signal(signal.SIGINT)
    try:
        service.process.wait(timeout=60)
    except subprocess.TimeoutExpired:  # pragma: no cover - reported by the kill
        service.process.kill()
        service.process.wait()


def load_demo(url: str, api_key: str | None = None) -> str:
    """``nmafc demo --url`` as a user runs it; returns its output."""
    args = [sys.executable, "-m", "nmafc.cli.main", "demo", "--url", url]
    if api_key:
        args += ["--api-key", api_key]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="session")
def built() -> None:
    if not dashboard_built():
        pytest.fail(f"The dashboard is not built: run `{BUILD_HINT}` (make test does).")


@pytest.fixture(scope="session")
def demo_service(built: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """An open service (no keys) with the demo conversation loaded."""
    service = start_service(tmp_path_factory.mktemp("dashboard"))
    try:
        load_demo(service.url)
        yield service
    finally:
        stop_service(service)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright."""
    if not Path(CHROMIUM).exists():
        missing(
            f"Chromium (looked for {CHROMIUM})",
            "apt-get install -y chromium (.ci/run does; Playwright's own browser download "
            "does not work here), or set NMAFC_TEST_CHROMIUM",
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS

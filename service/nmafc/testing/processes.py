"""``nmafc serve`` / ``nmafc worker`` as real child processes, with their logs kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from nmafc.testing.seaweedfs import restartable_port


class NmafcProcess:
    """One ``nmafc`` child process (``serve`` on a free port, or ``worker``)."""

    def __init__(
        self,
        command: str,
        env: dict[str, str],
        log_path: Path,
        *,
        drop: Sequence[str] = (),
        wrapper: Sequence[str] = (),
    ) -> None:
        self.command = command
        # A command line the child runs under (e.g. strace and its options, ending ``--``).
        self.wrapper = tuple(wrapper)
        # The child inherits this process's environment, minus ``drop``, plus ``env``.
        inherited = {k: v for k, v in os.environ.items() if k not in drop}
        self.env = {**inherited, **env}
        self.log_path = log_path
        self.port = restartable_port() if command == "serve" else None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 120.0) -> NmafcProcess:
        argv = [*self.wrapper, sys.executable, "-m", "nmafc.cli.main", self.command]
        if self.port is not None:
            argv += ["--host", "127.0.0.1", "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                argv, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        if self.port is not None:
            try:
                self._wait_ready(time.monotonic() + timeout_s)
            except BaseException:
                self.kill()
                raise
        return self

    def _wait_ready(self, deadline: float) -> None:
        while True:
            if self.process is None or self.process.poll() is not None:
                raise RuntimeError(f"nmafc {self.command} exited:\n{self.log()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"nmafc {self.command} not ready:\n{self.log()[-3000:]}")
            time.sleep(0.3)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, timeout_s: float = 60.0) -> int:
        """SIGINT (a clean shutdown), SIGKILL if it takes longer than ``timeout_s``."""
        process, self.process = self.process, None
        if process is None:
            return 0
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            return process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def kill(self) -> None:
        """SIGKILL: no clean-up at all, as in a crash."""
        process, self.process = self.process, None
        if process is not None:
            process.kill()
            process.wait()

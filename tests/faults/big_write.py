"""A write just under the 4 MiB body limit whose every text fills the model's window."""

from __future__ import annotations

import json
import threading

import psutil

BODY_FACTS = 1000
FACT_CHARS = 3700


def big_write_body() -> bytes:
    """~3.7 MB of JSON: 1,000 facts of 3,700 characters (each > 256 tokens)."""
    facts = [
        {
            "content": (f"Fact {j}: " + "Maria planted tulips in the garden in Lisbon. " * 80)[
                :FACT_CHARS
            ]
        }
        for j in range(BODY_FACTS)
    ]
    return json.dumps({"facts": facts}).encode()


class PeakRss:
    """The highest resident memory of a process (and its children) while it is watched."""

    def __init__(self, pid: int, every_s: float = 0.05) -> None:
        self.process = psutil.Process(pid)
        self.every_s = every_s
        self.peak = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def now(self) -> int:
        total = self.process.memory_info().rss
        for child in self.process.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(self.every_s):
            self.peak = max(self.peak, self.now())

"""A dependency-free progress bar on stderr."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``[#####.....] 12/40 3.1/s eta 9s``; redrawn in place on a terminal, in tenths otherwise."""

    def __init__(
        self, label: str, total: int, *, stream: TextIO | None = None, enabled: bool = True
    ) -> None:
        self.label = label
        self.total = max(0, total)
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self._start = time.perf_counter()
        self._last_draw = 0.0
        self._last_tenth = -1
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        if enabled:  # show the bar before the first (possibly slow) step finishes
            self._last_tenth = 0
            self.stream.write(self.line() + ("" if self._tty else "\n"))
            self.stream.flush()

    def update(self, n: int = 1, note: str = "") -> None:
        """Advance by ``n`` and redraw if due."""
        self.done = min(self.total, self.done + n) if self.total else self.done + n
        if not self.enabled:
            return
        now = time.perf_counter()
        if self._tty:
            # Redrawing on every step would cost more than cheap steps themselves.
            if now - self._last_draw >= 0.1 or self.done == self.total:
                self._last_draw = now
                self.stream.write("\r" + self.line(now, note))
                self.stream.flush()
            return
        tenth = self.done * 10 // self.total if self.total else 0
        if tenth != self._last_tenth:
            # Logs and CI output get one line per tenth, not thousands of carriage returns.
            self._last_tenth = tenth
            self.stream.write(self.line(now, note) + "\n")
            self.stream.flush()

    def line(self, now: float | None = None, note: str = "") -> str:
        """The bar as text."""
        elapsed = max(1e-9, (now or time.perf_counter()) - self._start)
        width = 24
        filled = width * self.done // self.total if self.total else width
        rate = self.done / elapsed
        left = (self.total - self.done) / rate if rate > 0 else 0.0
        bar = "#" * filled + "." * (width - filled)
        # Slow steps (a whole conversation) read better as seconds per step.
        speed = f"{rate:.1f}/s" if rate >= 1 or not self.done else f"{1 / rate:.1f}s/step"
        text = f"{self.label} [{bar}] {self.done}/{self.total} {speed} eta {left:.0f}s"
        return f"{text} {note}".rstrip()

    def close(self) -> None:
        """Finish the line."""
        if self.enabled and self._tty:
            self.stream.write("\r" + self.line() + "\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

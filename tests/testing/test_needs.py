"""A missing tool skips a test on a workstation and fails it in CI (``tests/needs.py``)."""

from __future__ import annotations

import pytest

from ..needs import missing


def test_a_missing_tool_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y strace"):
        missing("strace", "apt-get install -y strace")


@pytest.mark.parametrize("value", ["true", "1", "TRUE"])
def test_a_missing_tool_fails_in_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="chromium is missing: apt-get install"):
        missing("chromium", "apt-get install -y chromium")

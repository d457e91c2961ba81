"""``nmafc bench load`` end to end: a real service, writers and readers, then verification."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nmafc.bench.load_bench import LoadOptions, run
from nmafc.cli.main import main

pytestmark = pytest.mark.faults


def test_a_short_load_loses_nothing_and_serves_no_5xx(tmp_path: Path) -> None:
    report = run(LoadOptions(duration_s=15, writers=2, readers=2), tmp_path)
    assert report["acknowledged"] > 0
    assert report["verified"] == report["acknowledged"]
    assert report["lost"] == 0, report["lost_writes"]
    assert report["server_errors"] == 0, report["errors"]
    assert report["ops"]["write"]["ok"] == report["acknowledged"]
    assert report["ops"]["search"]["ok"] > 0
    assert report["ops"]["write"]["latency_ms"]["p99"] > 0
    saved = json.loads((tmp_path / "load.json").read_text())
    assert saved["lost"] == 0
    assert "lost = 0/" in (tmp_path / "load.md").read_text()


def test_the_cli_reports_lost_writes_against_a_given_url(tmp_path: Path) -> None:
    # Nothing listens there: every write fails, nothing is acknowledged, so nothing is lost,
    # and the command still exits 0 only when lost == 0 and no 5xx was served.
    code = main(
        ["bench", "load", "--duration", "1", "--writers", "1", "--readers", "1",
         "--url", "http://127.0.0.1:9", "--out", str(tmp_path)]
    )  # fmt: skip
    report = json.loads((tmp_path / "load.json").read_text())
    assert code == 0
    assert report["acknowledged"] == 0
    assert report["errors"]["connect_error"] > 0

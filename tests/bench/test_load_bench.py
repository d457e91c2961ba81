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


def test_a_fixed_number_of_writes_reports_growth_rss_and_the_table_shape(tmp_path: Path) -> None:
    options = LoadOptions(writers=2, readers=1, writes=60, new_share=0.5, duration_s=600)
    report = run(options, tmp_path, name="growth")
    assert report["ops"]["write"]["requests"] == 60
    assert report["lost"] == 0, report["lost_writes"]
    growth = report["write_growth"]
    assert growth["all"]["writes"] == 60
    assert growth["new_conversation"]["writes"] + growth["loaded_conversation"]["writes"] == 60
    assert growth["new_conversation"]["writes"] > 0
    assert 0 < growth["all"]["first_p50_ms"]
    assert 0 < growth["all"]["last_p50_ms"]
    assert growth["all"]["ratio"] == pytest.approx(
        growth["all"]["last_p50_ms"] / growth["all"]["first_p50_ms"], rel=0.01
    )
    rss = report["server_rss_mib"]
    assert 50 < rss["after_first_minute"] <= rss["peak"]
    assert 50 < rss["end"] <= rss["peak"]
    assert rss["first_sample_at_s"] <= rss["end_at_s"]
    table = report["hot_table"]
    assert table["fragments"] >= 1
    assert table["versions"] >= 1
    assert table["rows"] >= 60  # every fact plus the watermark rows
    text = (tmp_path / "growth.md").read_text()
    assert "p50 last 10 %" in text
    assert "fragments" in text


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

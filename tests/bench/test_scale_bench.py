"""``nmafc bench scale`` at a tiny size: every part of the report is measured, nothing fails."""

from __future__ import annotations

import json
from pathlib import Path

from nmafc.bench.scale_text import distinct_sentences, question
from nmafc.cli.main import main


def test_a_tiny_scale_run_reports_cache_hits_latencies_loads_maintenance_and_cache_off(
    tmp_path: Path,
) -> None:
    code = main(
        [
            "bench", "scale", "--scopes", "8", "--records-per-scope", "40",
            "--big-scope-records", "600", "--searches", "80", "--cache-mb", "1",
            "--embed-pool", "200", "--name", "tiny", "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "tiny.json").read_text())
    assert report["records_loaded"] == 8 * 40 + 600
    assert report["errors"] == 0, report["window"]["error_samples"]
    # A pool smaller than the records: vectors reused with noise, and the report says so.
    assert report["vectors"] == {**report["vectors"], "embedded_sentences": 200, "exact": False}
    window = report["window"]
    assert window["searches"] == 80
    # A 1 MB cache holds some of the 9 scopes, not all: both kinds of search happen.
    assert 0 < window["hit_ratio"] < 1
    assert window["search_ms"]["cached"]["p99"] > 0
    assert window["search_ms"]["uncached"]["p50"] > 0
    assert window["scope_loads"] >= window["search_ms"]["uncached"]["n"] > 0
    rss = report["rss_mb"]
    assert set(rss) == {"before_load", "after_load", "after_window", "end"}
    assert min(rss.values()) > 0
    assert report["cached_records"] > 0
    assert report["bytes_per_cached_record"]["cache_accounting"] > 0
    assert report["scope_load_ms"]["small"]["n"] == 8
    assert report["scope_load_ms"]["big"]["n"] == 1
    maintenance = report["maintenance"]
    assert maintenance["scopes"] == 9
    assert maintenance["expired"] > 0  # a quarter of the records are Ephemeral
    off = report["cache_off"]
    assert off["searches"] == 80
    assert off["hit_ratio"] == 0
    assert off["scope_loads"] == 0  # with the cache off nothing is loaded into RAM
    assert off["search_ms"]["big"]["n"] == 40
    assert off["search_ms"]["small"]["n"] == 40
    text = (tmp_path / "tiny.md").read_text()
    assert "cache hit ratio" in text
    assert "cache off: big scope" in text


def test_the_sentence_pool_repeats_no_text_and_questions_vary() -> None:
    import random

    rng = random.Random(1)
    pool = distinct_sentences(2000, rng)
    assert len({s.text for s in pool}) == 2000
    assert len({s.entity for s in pool}) > 100
    assert len({question(rng) for _ in range(200)}) > 150


def test_a_tiny_first_recall_run_answers_the_background_arm_before_its_load(
    tmp_path: Path,
) -> None:
    code = main(
        [
            "bench", "first-recall", "--records", "400", "--repeats", "2",
            "--embed-pool", "100", "--name", "first", "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert code == 0
    arms = json.loads((tmp_path / "first.json").read_text())["arms"]
    assert arms["inline"]["loads_done_when_first_returned"] == [1, 1]
    assert arms["background"]["loads_done_when_first_returned"] == [0, 0]
    for arm in arms.values():
        assert arm["first_ms"]["n"] == 2
        assert arm["next_ms"]["p50"] > 0
        assert 0 <= arm["overlap"]["p50"] <= 1
    assert "| background |" in (tmp_path / "first.md").read_text()

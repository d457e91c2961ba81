"""``nmafc bench ann`` at a tiny size: the index is built and both arms are measured."""

from __future__ import annotations

import json
from pathlib import Path

from nmafc.cli.main import main


def test_a_tiny_ann_run_builds_the_index_and_compares_it_with_the_exact_scan(
    tmp_path: Path,
) -> None:
    code = main(
        ["bench", "ann", "--rows", "3000", "--queries", "6", "--name", "tiny",
         "--out", str(tmp_path)]
    )  # fmt: skip
    assert code == 0
    report = json.loads((tmp_path / "tiny.json").read_text())
    assert report["index_built"]
    assert report["index"]["indexed_rows"] == report["table_rows"]
    assert set(report["results"]) == {"big", "medium", "small", "agent"}
    for result in report["results"].values():
        assert result["queries"] == 6
        # Every partition of a 3,000-row index is probed: the top ids are the exact ones.
        assert result["overlap_min"] == 1.0
        assert result["indexed_ms"]["p50"] > 0
        assert result["exact_ms"]["p50"] > 0
    assert "| small |" in (tmp_path / "tiny.md").read_text()

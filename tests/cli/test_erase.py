"""`nmafc erase`: the offline rewrite that leaves no freed bytes in any file."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from nmafc.cli.main import main

from ..erasure import files_holding, phrase


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("NMAFC_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("NMAFC_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("NMAFC_EXTRACTOR", "verbatim")
    return tmp_path


def test_erase_zeroes_what_a_store_freed_before_secure_delete_was_on(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["migrate"]) == 0
    token = phrase()
    # A row deleted by a connection without secure_delete (a database from an older
    # release) leaves its bytes in a free page.
    with sqlite3.connect(data_dir / "cold.db") as conn:
        conn.execute("PRAGMA secure_delete=OFF")
        conn.execute("INSERT INTO meta (key, value) VALUES ('legacy', ?)", (token * 40,))
        conn.commit()
        conn.execute("DELETE FROM meta WHERE key = 'legacy'")
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert files_holding(data_dir, token) == ["cold.db"]
    capsys.readouterr()

    assert main(["erase"]) == 0

    report = json.loads(capsys.readouterr().out)
    assert report["cold"]["steps"] == ["fts_optimize", "vacuum", "wal_truncate"]
    assert report["cold"]["complete"] is True
    assert report["hot"]["complete"] is True
    assert files_holding(data_dir, token) == []

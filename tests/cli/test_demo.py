"""``nmafc demo`` fills a demo scope through the HTTP API, so the dashboard has data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nmafc.cli import demo
from nmafc.cli.main import main
from nmafc.client import Client
from nmafc.settings import Settings

SCOPE = {"agent_id": demo.AGENT, "conversation_id": demo.CONVERSATION}


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for name in list(os.environ):
        if name.startswith("NMAFC_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("NMAFC_DATA_DIR", str(tmp_path))
    return Settings(data_dir=tmp_path)


def assert_populated(client: Client) -> None:
    stats = client.stats()
    assert stats.turns == sum(len(messages) for _, messages in demo.SESSIONS)
    assert sum(stats.records.values()) > 0
    assert sum(stats.invalidated.values()) > 0  # the move from Lisbon to Porto
    assert len(client.graph().nodes) > 0
    assert "Porto" in client.search("Where does Maya live?").context


def test_demo_loads_the_sample_into_a_running_service_over_http(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    with demo._in_process(settings) as url:
        assert main(["demo", "--url", url]) == 0
        # Twice: the demo replaces its conversation instead of doubling it.
        assert main(["demo", "--url", url]) == 0
        with Client(url, **SCOPE) as client:
            assert_populated(client)
    out = capsys.readouterr().out
    assert f"Open the dashboard at {url}/" in out


def test_demo_without_a_service_starts_one_and_leaves_the_data_for_serve(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo, "DEFAULT_URL", "http://127.0.0.1:9")  # nothing answers there
    assert main(["demo"]) == 0
    assert "starting one in this process" in capsys.readouterr().out
    with demo._in_process(settings) as url, Client(url, **SCOPE) as client:
        assert_populated(client)


def test_demo_reports_an_unreachable_url(
    settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--url", "http://127.0.0.1:9"]) == 1
    assert "cannot reach" in capsys.readouterr().out

"""``nmafc init`` and ``nmafc chat`` as a user runs them: real processes, piped stdin, and a
fake upstream LLM on loopback for the chat."""

from __future__ import annotations

import io
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nmafc.cli.init import run_init
from nmafc.cli.main import main
from nmafc.settings import load_settings

from ..providers.fakes import FakeUpstream, running_upstream

SECRET = "sk-very-secret-upstream-key"


def nmafc(
    *args: str, stdin: str = "", env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nmafc.cli.main", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
    )


def test_init_with_flags_writes_a_private_toml_the_settings_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "nmafc.toml"
    code = main(
        [
            "init",
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-5",
            "--api-key",
            SECRET,
            "--data-dir",
            str(tmp_path / "data"),
            "--config",
            str(config),
            "--yes",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert SECRET not in out
    assert f"nmafc --config {config} serve" in out
    assert 'base_url="http://127.0.0.1:8000/v1"' in out
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    settings = load_settings(config)
    assert settings.llm.provider == "anthropic"
    assert settings.llm.base_url == "https://api.anthropic.com"
    assert settings.llm.model == "claude-sonnet-4-5"
    assert settings.llm.api_key is not None
    assert settings.llm.api_key.get_secret_value() == SECRET
    assert settings.data_dir == tmp_path / "data"


def init(config: Path, answers: str, **flags: Any) -> tuple[int, str]:
    """``nmafc init`` with typed answers (piped, so the key prompt reads without getpass)."""
    out = io.StringIO()
    values: dict[str, Any] = {
        "provider": None,
        "base_url": None,
        "model": None,
        "api_key": None,
        "data_dir": None,
        **flags,
    }
    code = run_init(config=config, yes=False, stdin=io.StringIO(answers), stdout=out, **values)
    return code, out.getvalue()


def test_init_asks_interactively_and_never_echoes_the_key(tmp_path: Path) -> None:
    config = tmp_path / "asked.toml"
    answers = "\n".join(["ollama", "http://127.0.0.1:11434/v1", "", str(tmp_path / "mem"), ""])
    code, out = init(config, answers)
    assert code == 0
    assert "LLM provider" in out
    assert "Model [llama3.2]" in out
    settings = load_settings(config)
    assert settings.llm.provider == "openai"  # Ollama speaks the OpenAI wire format
    assert settings.llm.base_url == "http://127.0.0.1:11434/v1"
    assert settings.llm.model == "llama3.2"  # the default, taken on an empty answer
    assert settings.llm.api_key is None
    # A key typed at the prompt is stored but never printed.
    keyed = tmp_path / "keyed.toml"
    flags = {"provider": "openai", "base_url": "https://api.openai.com/v1", "model": "m"}
    code, out = init(keyed, SECRET + "\n", data_dir=tmp_path, **flags)
    assert code == 0
    assert "API key" in out
    assert SECRET not in out
    assert SECRET in keyed.read_text()
    # An existing file is kept unless the user says so.
    code, out = init(keyed, "n\n")
    assert code == 1
    assert SECRET in keyed.read_text()


@pytest.fixture
def upstream() -> Iterator[FakeUpstream]:
    with running_upstream("openai") as fake:
        yield fake


def test_chat_repl_runs_the_pipeline_and_its_commands(
    tmp_path: Path, upstream: FakeUpstream
) -> None:
    upstream.reply({"chunks": ["Nice", " name!"]}, {"chunks": ["Rex."]}, {"chunks": ["Hm?"]})
    env = {
        "NMAFC_DATA_DIR": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "NMAFC_EXTRACTOR": "verbatim",
        "NMAFC_LLM_PROVIDER": "openai",
        "NMAFC_LLM_BASE_URL": upstream.url,
        "NMAFC_LLM_MODEL": "fake-model",
    }
    script = "\n".join(
        [
            "My dog is called Rex.",
            "/stats",
            "/memory",
            "What is my dog called?",
            "/events 3",
            "/rollback 0",
            "/stats",
            "/bogus",
            "/quit",
        ]
    )
    run = nmafc("chat", "--agent", "me", stdin=script + "\n", env=env)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "assistant> Nice name!" in out
    assert "assistant> Rex." in out
    assert "2 turns" in out  # /stats after the first exchange
    assert "My dog is called Rex." in out  # /memory
    assert " turn " in out
    assert "turn" in out
    assert "Rolled back to turn 0" in out
    assert "0 turns" in out  # /stats after the rollback
    assert "Unknown command /bogus" in out
    second = upstream.chat_requests[1].body
    assert second["model"] == "fake-model"
    assert "My dog is called Rex." in second["messages"][0]["content"]  # recalled memory
    assert second["messages"][-1] == {"role": "user", "content": "What is my dog called?"}


def test_chat_without_a_model_names_the_setting(tmp_path: Path) -> None:
    env = {
        "NMAFC_DATA_DIR": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "NMAFC_LLM_MODEL": "",
    }
    run = nmafc("chat", stdin="/quit\n", env=env)
    assert run.returncode == 1
    assert "NMAFC_LLM_MODEL" in run.stderr

"""``nmafc init``: ask for (or take as flags) the upstream LLM and storage, write TOML.

Secrets are read without echo and never printed; the file is created readable by its
owner only. Environment variables still override whatever the file says.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import platformdirs

from nmafc.errors import InvalidInput
from nmafc.settings import default_config_file

PROVIDERS = ("openai", "anthropic", "bedrock", "ollama", "other")
DEFAULT_URLS = {
    "openai": "https://api.openai.com/v1",
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://127.0.0.1:11434/v1",
}
DEFAULT_MODELS = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
    "bedrock": "anthropic.claude-3-5-haiku-20241022-v1:0",
    "ollama": "llama3.2",
}
KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


@dataclass
class Answers:
    provider: str
    base_url: str | None
    model: str | None
    api_key: str | None
    data_dir: Path


class Prompter:
    """Questions on ``stdin`` / ``stdout``; a secret is read with getpass on a terminal."""

    def __init__(self, stdin: TextIO, stdout: TextIO) -> None:
        self.stdin = stdin
        self.stdout = stdout

    def ask(self, question: str, default: str | None = None) -> str:
        suffix = f" [{default}]" if default else ""
        self.stdout.write(f"{question}{suffix}: ")
        self.stdout.flush()
        answer = self.stdin.readline()
        if not answer:  # end of input: take the defaults from here on
            self.stdout.write("\n")
        return answer.strip() or (default or "")

    def secret(self, question: str) -> str:
        if self.stdin.isatty():
            return getpass.getpass(f"{question} (hidden): ", stream=self.stdout).strip()
        # Piped input is not echoed anyway; read it without printing it back.
        self.stdout.write(f"{question} (hidden): ")
        self.stdout.flush()
        answer = self.stdin.readline().strip()
        self.stdout.write("\n")
        return answer


def gather(
    prompter: Prompter | None,
    *,
    provider: str | None,
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    data_dir: Path | None,
) -> Answers:
    """Flags win; what they leave open is asked (or defaulted when not interactive)."""
    default_dir = Path(platformdirs.user_data_dir("nmafc", appauthor=False))
    if prompter is not None and provider is None:
        provider = prompter.ask(f"LLM provider ({', '.join(PROVIDERS)})", "openai").lower()
    provider = provider or "openai"
    if provider not in PROVIDERS:
        raise InvalidInput(
            f"Unknown provider {provider!r}.", fix=f"Choose one of: {', '.join(PROVIDERS)}."
        )
    if base_url is None and provider != "bedrock":
        default_url = DEFAULT_URLS.get(provider)
        base_url = (
            prompter.ask("Base URL of the OpenAI-compatible endpoint", default_url)
            if prompter is not None
            else default_url
        ) or None
    if model is None:
        default_model = DEFAULT_MODELS.get(provider)
        model = (prompter.ask("Model", default_model) if prompter else default_model) or None
    if api_key is None and prompter is not None and provider not in ("bedrock", "ollama"):
        variable = KEY_VARIABLES.get(provider)
        hint = f" (empty: use ${variable})" if variable else " (empty: none)"
        api_key = prompter.secret(f"API key{hint}") or None
    if data_dir is None and prompter is not None:
        data_dir = Path(prompter.ask("Where to keep memory", str(default_dir)))
    return Answers(provider, base_url, model, api_key, (data_dir or default_dir).expanduser())


def render(answers: Answers) -> str:
    """The TOML text (JSON string escapes are valid TOML basic strings)."""
    kind = {"ollama": "openai", "other": "openai"}.get(answers.provider, answers.provider)
    lines = [
        "# Written by `nmafc init`. NMAFC_* environment variables override these values.",
        f"data_dir = {json.dumps(str(answers.data_dir))}",
        "",
        "[llm]",
        f"provider = {json.dumps(kind)}",
    ]
    for name in ("base_url", "model", "api_key"):
        value = getattr(answers, name)
        if value:
            lines.append(f"{name} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def run_init(
    *,
    config: Path | None,
    provider: str | None,
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    data_dir: Path | None,
    yes: bool,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Write the settings file; print where it went and how to start."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout  # looked up per call, not import
    path = (config or default_config_file()).expanduser()
    prompter = None if yes else Prompter(stdin, stdout)
    if path.exists() and prompter is not None:
        overwrite = prompter.ask(f"{path} exists. Overwrite? (y/N)", "n")
        if overwrite.lower() not in ("y", "yes"):
            stdout.write("Nothing written.\n")
            return 1
    answers = gather(
        prompter,
        provider=provider,
        base_url=base_url,
        model=model,
        api_key=api_key,
        data_dir=data_dir,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    # Created owner-only before the key is written into it.
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(render(answers))
    os.chmod(path, 0o600)
    config_flag = "" if path == default_config_file() else f" --config {path}"
    key_note = "stored in the file" if answers.api_key else "read from the environment"
    stdout.write(
        f"Wrote {path} (provider {answers.provider}, model {answers.model or '-'}, "
        f"key {key_note}).\n\n"
        f"Start the service:\n  nmafc{config_flag} serve\n\n"
        "Then give any OpenAI app memory by changing its base URL:\n"
        '  client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="<NMAFC key or any>")\n\n'
        f"Or talk to it in the terminal:\n  nmafc{config_flag} chat\n"
    )
    return 0

"""The README's OpenAI snippet, verbatim, against `nmafc serve` and a fake OpenAI upstream."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from nmafc.testing.processes import NmafcProcess

from ..providers.fakes import FakeUpstream, running_upstream

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_openai_snippet_gets_memory_and_is_remembered(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Use it from any OpenAI app", 1)[1]
    snippet = re.search(r"```python\n(.*?)```", section, re.S)
    assert snippet, "README.md lacks the OpenAI snippet"
    with running_upstream("openai") as upstream:
        upstream.reply({"text": "Avoid shellfish."})
        service = NmafcProcess(
            "serve",
            {
                "NMAFC_DATA_DIR": str(tmp_path / "data"),
                "NMAFC_CONFIG": "",
                "XDG_CONFIG_HOME": str(tmp_path / "config"),
                "NMAFC_API_KEYS": "demo-secret:support-bot",
                "NMAFC_LLM_PROVIDER": "openai",
                "NMAFC_LLM_BASE_URL": upstream.url,
                "NMAFC_LLM_API_KEY": "upstream-secret",
            },
            tmp_path / "serve.log",
        ).start()
        try:
            _run_snippet(service, snippet.group(1), upstream)
        finally:
            service.stop()


def _run_snippet(service: NmafcProcess, snippet: str, upstream: FakeUpstream) -> None:
    headers = {"Authorization": "Bearer demo-secret", "X-Conversation-ID": "alice"}
    added = httpx.post(
        f"{service.url}/v1/memories",
        json={"messages": [{"role": "user", "content": "I'm allergic to shellfish."}]},
        headers=headers,
    )
    assert added.status_code == 201, added.text
    # The one substitution: the port this test's server listens on.
    code = snippet.replace("127.0.0.1:8000", f"127.0.0.1:{service.port}")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "Avoid shellfish."
    system = upstream.chat_requests[-1].body["messages"][0]
    assert system["role"] == "system"
    assert "shellfish" in system["content"]
    deadline = time.monotonic() + 30
    while True:  # remembered after the reply, from the durable queue
        listed = httpx.get(f"{service.url}/v1/memories", headers=headers).json()
        if any("avoid shellfish" in item["content"].lower() for item in listed["items"]):
            break
        assert time.monotonic() < deadline, listed
        time.sleep(0.3)

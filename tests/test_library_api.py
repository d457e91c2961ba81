"""The library API as a user meets it: SyncMemory, Memory, and the README example."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from nmafc import Memory, SyncMemory
from nmafc.core.turns import Message
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import InvalidInput
from nmafc.settings import Settings

DATED_LINE = re.compile(r"\d{1,2} [A-Z][a-z]+ \d{4}(?: · turn \d|:)")

README_EXAMPLE = """
from nmafc import SyncMemory

with SyncMemory(agent_id="support-bot", conversation_id="alice") as memory:
    memory.remember([
        {"role": "user", "content": "I'm allergic to shellfish.",
         "timestamp": "2024-03-01T12:00:00Z"},
        {"role": "assistant", "content": "Noted - no shellfish."},
    ])
    print(memory.recall("what can't I eat?").context)
"""


def test_the_readme_example_runs_offline_into_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "NMAFC_", "AWS_"))}
    env.update(
        NMAFC_DATA_DIR=str(data),
        HF_HUB_OFFLINE="1",
        no_proxy="*",
        HTTPS_PROXY="http://127.0.0.1:9",
        HTTP_PROXY="http://127.0.0.1:9",
    )
    out = subprocess.run(
        [sys.executable, "-c", README_EXAMPLE],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "shellfish" in out.stdout
    assert DATED_LINE.search(out.stdout)  # the context is dated memory
    assert (data / "cold.db").exists()
    assert (data / "hot").is_dir()
    assert list(workdir.iterdir()) == []  # nothing written into the current folder


def test_sync_memory_accepts_strings_dicts_and_captions(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    with SyncMemory("agent", "c1", settings=settings) as memory:
        result = memory.remember(
            [
                "plain string from the user",
                {
                    "speaker": "Melanie",
                    "content": "Look at this!",
                    "blip_caption": "a photo of a sunset",
                },
            ]
        )
        assert [t.speaker for t in result.turns] == ["user", "Melanie"]
        assert "sunset" in memory.recall("sunset photo", reinforce=False).context
        other = memory.scope("c2")
        other.remember("something else")
        assert other.engine is memory.engine
        assert len(memory.recall("something", scope="agent", reinforce=False).hits) >= 2
        with pytest.raises(InvalidInput, match="content"):
            memory.remember({"role": "user"})


def test_an_undated_message_takes_the_time_of_the_message_before_it(
    tmp_path: Path, shared_embedder: Any
) -> None:
    settings = Settings(data_dir=tmp_path, extractor="verbatim", consolidation={"inline": False})  # type: ignore[arg-type]
    engine = MemoryEngine.open(settings, embedder=shared_embedder)
    memory = SyncMemory("agent", "c1", engine=engine)
    march, may = datetime(2024, 3, 1, 12, tzinfo=UTC), datetime(2024, 5, 1, tzinfo=UTC)
    try:
        said = memory.remember(
            [
                {"role": "user", "content": "I'm allergic to shellfish.",
                 "timestamp": "2024-03-01T12:00:00Z"},
                {"role": "assistant", "content": "Noted - no shellfish."},
                Message("And to peanuts."),
            ]
        )  # fmt: skip
        assert [t.occurred_at for t in said.turns] == [march, march, march]
        call = datetime(2024, 4, 1, tzinfo=UTC)
        said = memory.remember(
            ["before", {"content": "dated", "occurred_at": may}, "after"], occurred_at=call
        )
        assert [t.occurred_at for t in said.turns] == [call, may, may]
        before = datetime.now(UTC)
        first = memory.remember(["undated", Message("dated", occurred_at=may)]).turns[0]
        assert first.occurred_at >= before
    finally:
        engine.close()


@pytest.mark.parametrize("when", [-1, 1700000000, 1.5, ["2024-03-01"]])
def test_a_timestamp_that_is_not_a_time_is_refused_naming_the_form(
    tmp_path: Path, shared_embedder: Any, when: Any
) -> None:
    settings = Settings(data_dir=tmp_path, extractor="verbatim", consolidation={"inline": False})  # type: ignore[arg-type]
    engine = MemoryEngine.open(settings, embedder=shared_embedder)
    try:
        memory = SyncMemory("agent", "c1", engine=engine)
        with pytest.raises(InvalidInput, match="ISO 8601"):
            memory.remember({"content": "When was this?", "timestamp": when})
        assert memory.stats().turns == 0
    finally:
        engine.close()


def test_async_memory_runs_operations_concurrently(tmp_path: Path) -> None:
    async def scenario() -> list[int]:
        async with Memory("agent", "c1", settings=Settings(data_dir=tmp_path)) as memory:
            conversations = [memory.scope(f"c{i}") for i in range(4)]
            await asyncio.gather(*(m.remember(f"fact {i}") for i, m in enumerate(conversations)))
            stats = await asyncio.gather(*(m.stats() for m in conversations))
            return [s.turns for s in stats]

    assert asyncio.run(scenario()) == [1, 1, 1, 1]


def test_inline_maintenance_runs_when_due(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, consolidation={"every_turns": 3})  # type: ignore[arg-type]
    engine = MemoryEngine.open(settings)
    memory = SyncMemory("agent", "c1", engine=engine)
    memory.remember(["a", "b", "c"])
    assert not engine.maintenance_due(memory.scope_id)
    engine.close()

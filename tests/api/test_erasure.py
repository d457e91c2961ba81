"""``DELETE /v1/memories`` erases from disk and its receipt says how, per store."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..erasure import files_holding, phrase
from .conftest import Running

pytestmark = pytest.mark.anyio

HEADERS = {"X-Agent-ID": "agent-x", "X-Conversation-ID": "private"}


async def test_a_purge_over_http_leaves_the_phrase_in_no_file_and_says_what_it_erased(
    running: Running, tmp_path: Path
) -> None:
    token = phrase()
    body = {"messages": [{"role": "user", "content": f"My PIN is {token}, remember it."}]}
    assert (await running.http.post("/v1/memories", json=body, headers=HEADERS)).status_code == 201
    search = {"query": f"PIN {token}", "reinforce": False}
    found = await running.http.post("/v1/memories/search", json=search, headers=HEADERS)
    assert token in found.json()["context"]
    assert files_holding(tmp_path, token)

    response = await running.http.delete("/v1/memories", headers=HEADERS)

    assert response.status_code == 200
    assert files_holding(tmp_path, token) == []
    erased = response.json()["erased"]
    assert erased["cold"] == {
        "steps": ["secure_delete", "fts_optimize", "wal_truncate"],
        "complete": True,
        "counts": erased["cold"]["counts"],
        "note": None,
    }
    assert erased["hot"]["complete"] is True
    assert erased["hot"]["counts"]["versions_removed"] > 0

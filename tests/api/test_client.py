"""The blocking ``Client`` against the real app, and typed errors rebuilt from problems."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from nmafc.api import create_app
from nmafc.client import Client, raise_for_problem
from nmafc.errors import MemoryNotFound, NmafcError, StoreUnavailable, Unauthorized

from .conftest import BOOTSTRAP, KEY_A, service_settings


def test_the_blocking_client_covers_the_memory_lifecycle(
    tmp_path: Path, shared_embedder: Any
) -> None:
    app = create_app(service_settings(tmp_path, api={"keys": BOOTSTRAP}), embedder=shared_embedder)
    with TestClient(app, base_url="http://nmafc.test") as http:
        nmafc = Client(api_key=KEY_A, conversation_id="alice", http=http)
        added = nmafc.add(["Alice keeps bees."], facts=None)
        memory = added.added[0]
        assert nmafc.search("bees", reinforce=False).context
        assert [m.id for m in nmafc.iter_memories(limit=1)] == [memory.id]
        assert nmafc.update(memory.id, content="Alice keeps wasps.").version == 2
        assert len(nmafc.history(memory.id).versions) == 2
        assert nmafc.events().items
        assert nmafc.stats().turns == 1
        assert nmafc.graph().nodes
        assert nmafc.ready().status == "ready"
        assert nmafc.rollback(0).removed == 1
        other = nmafc.scoped(conversation_id="bob")
        assert other.list().items == []
        assert nmafc.purge().cold["turns"] == 1
        with pytest.raises(MemoryNotFound) as caught:
            nmafc.get(str(uuid.uuid4()))
        assert caught.value.status == 404
        assert caught.value.request_id  # type: ignore[attr-defined]
        with pytest.raises(Unauthorized):
            Client(api_key="wrong", http=http).stats()


def test_problems_become_the_librarys_error_types() -> None:
    request = httpx.Request("GET", "http://x/v1/stats")
    unavailable = httpx.Response(
        503,
        json={"code": "store_unavailable", "detail": "db down", "fix": "start it"},
        headers={"Retry-After": "5"},
        request=request,
    )
    with pytest.raises(StoreUnavailable) as caught:
        raise_for_problem(unavailable)
    assert (caught.value.detail, caught.value.fix) == ("db down", "start it")
    assert caught.value.retry_after == "5"  # type: ignore[attr-defined]
    with pytest.raises(NmafcError):
        raise_for_problem(httpx.Response(502, text="<html>bad gateway</html>", request=request))

"""The API's documentation is public (no tenant data in it) unless switched off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import BOOTSTRAP, KEY_A, Running, serve, service_settings
from .test_errors import assert_problem

pytestmark = pytest.mark.anyio
DOCS = ("/docs", "/redoc", "/openapi.json")


async def test_the_docs_answer_without_a_key_while_the_api_needs_one(secured: Running) -> None:
    for path in DOCS:
        response = await secured.http.get(path)
        assert response.status_code == 200, path
    schema = (await secured.http.get("/openapi.json")).json()
    assert "/v1/memories/search" in schema["paths"]
    assert (await secured.http.get("/v1/memories")).status_code == 401


async def test_docs_switched_off_are_404_and_the_api_still_serves(
    tmp_path: Path, shared_embedder: Any
) -> None:
    settings = service_settings(tmp_path, api={"keys": BOOTSTRAP}, server={"docs": False})
    async with serve(settings, shared_embedder) as app:
        for path in DOCS:
            assert_problem(await app.http.get(path), 404, "route_not_found")
        key = {"Authorization": f"Bearer {KEY_A}"}
        assert (await app.http.get("/v1/memories", headers=key)).status_code == 200
        # The schema stays available to `nmafc openapi` and the generated clients.
        assert "/v1/memories" in app.app.openapi()["paths"]

"""Schemathesis against the live app (embedded default, auth on): no 5xx, no schema drift.

A real uvicorn server runs in a thread on a loopback port; each operation gets a bounded
number of generated requests (positive and negative), all with an agent-bound key.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import uvicorn
from hypothesis import HealthCheck, settings

from nmafc.api import create_app

from ..conftest import _Shared
from ..providers.fakes import running_upstream
from .conftest import KEY_A, service_settings

EXAMPLES = int(os.environ.get("NMAFC_TEST_SCHEMATHESIS_EXAMPLES", "25"))


@pytest.fixture(scope="module")
def live_url(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Iterator[str]:
    with ExitStack() as stack:
        yield from _live_url(stack, tmp_path_factory, embedder)


def _live_url(
    stack: ExitStack, tmp_path_factory: pytest.TempPathFactory, embedder: Any
) -> Iterator[str]:
    data_dir: Path = tmp_path_factory.mktemp("schemathesis")
    # The chat proxy forwards to a fake upstream LLM (a real server on loopback).
    upstream = stack.enter_context(running_upstream("openai"))
    settings = service_settings(
        data_dir,
        api={"keys": f"{KEY_A}:agent-a"},
        llm={"base_url": upstream.url, "model": "fake-model", "max_retries": 0},
    )
    app = create_app(settings, embedder=_Shared(embedder))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the service did not start")
        time.sleep(0.1)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=30)


# The committed document, which test_openapi.py pins to the app's own schema.
schema = schemathesis.openapi.from_dict(
    json.loads((Path(__file__).parents[2] / "openapi" / "openapi.json").read_text())
)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("NMAFC_TEST_SCHEMATHESIS_RANDOM") is None,
    suppress_health_check=list(HealthCheck),
)
def test_the_live_api_conforms_to_its_schema(case: Any, live_url: str) -> None:
    case.call_and_validate(
        base_url=live_url, headers={"Authorization": f"Bearer {KEY_A}"}, timeout=60
    )

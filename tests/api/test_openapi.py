"""The committed OpenAPI document is the app's: regenerate it with `nmafc openapi`."""

from __future__ import annotations

import json
from pathlib import Path

from nmafc.api import create_app
from nmafc.api.errors import speaks_openai
from nmafc.settings import Settings

COMMITTED = Path(__file__).parents[2] / "openapi" / "openapi.json"


def test_the_committed_schema_matches_the_app(tmp_path: Path) -> None:
    live = create_app(Settings(data_dir=tmp_path)).openapi()
    committed = json.loads(COMMITTED.read_text())
    assert committed == live, "schema drift: run `nmafc openapi > openapi/openapi.json`"


def test_every_route_has_a_summary_and_every_error_is_documented_in_its_shape(
    tmp_path: Path,
) -> None:
    schema = create_app(Settings(data_dir=tmp_path)).openapi()
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            assert operation.get("description"), f"{method.upper()} {path} has no docstring"
            for status, response in operation["responses"].items():
                if not status.startswith(("4", "5")):
                    continue
                if speaks_openai(path):  # the chat proxy answers as OpenAI does
                    ref = response["content"]["application/json"]["schema"]["$ref"]
                    assert ref == "#/components/schemas/OpenAIError", (path, status)
                else:
                    assert "application/problem+json" in response["content"], (path, status)

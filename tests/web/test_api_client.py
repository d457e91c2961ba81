"""The dashboard's API types are generated from the committed OpenAPI document."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..needs import missing

ROOT = Path(__file__).parents[2]
UI = ROOT / "web-ui"
GENERATED = UI / "src" / "api" / "schema.d.ts"


def test_generated_api_types_match_the_committed_openapi_document(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        missing("Node (to check the dashboard's generated client)",
                "install Node 20+ and npm (https://nodejs.org)")  # fmt: skip
    cli = UI / "node_modules" / ".bin" / "openapi-typescript"
    if not cli.exists():
        pytest.fail("web-ui/node_modules is missing: run `make ui` (or `cd web-ui && npm ci`)")
    fresh = tmp_path / "schema.d.ts"
    # The same command as `npm run generate-api`, into a temporary file.
    script = subprocess.run(
        ["node", "-p", "require('./package.json').scripts['generate-api']"],
        cwd=UI,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    args = script.split()
    assert args[0] == "openapi-typescript"
    out = args.index("-o")
    args[out + 1] = str(fresh)
    subprocess.run([str(cli), *args[1:]], cwd=UI, check=True, capture_output=True)
    assert fresh.read_text() == GENERATED.read_text(), (
        "web-ui/src/api/schema.d.ts is stale: run `make openapi` and commit the result"
    )

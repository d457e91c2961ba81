"""Routes and services call engine methods; the engine's context stays the engine's own.

Import direction is checked by import-linter (``make lint``, contracts in pyproject.toml);
what an import graph cannot see is an attribute path such as ``engine.ctx.cold``, which
would let the API or a background service reach a store around the engine's unit of work.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "service" / "nmafc"
OUTSIDE_THE_ENGINE = ("api", "services")


def _ctx_uses(path: Path, root: Path = PACKAGE) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "ctx"
    ]


@pytest.mark.parametrize("layer", OUTSIDE_THE_ENGINE)
def test_no_route_or_service_reaches_into_the_engine_context(layer: str) -> None:
    files = sorted((PACKAGE / layer).rglob("*.py"))
    assert files
    assert [use for path in files for use in _ctx_uses(path)] == []


def test_the_check_sees_an_engine_context_reach_in(tmp_path: Path) -> None:
    probe = tmp_path / "route.py"
    probe.write_text("def f(state):\n    return state.engine.ctx.cold\n")
    assert _ctx_uses(probe, tmp_path) == ["route.py:2: state.engine.ctx"]

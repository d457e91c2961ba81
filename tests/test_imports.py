"""Importing the light parts of NMAFC loads no store, framework or model.

Each import runs in a fresh interpreter and the test reads that interpreter's
``sys.modules``: a module-level import anywhere on the path shows up there, whatever the
machine's speed.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import nmafc
import nmafc.core

STORES_AND_FRAMEWORKS = ("lancedb", "pyarrow", "sqlalchemy", "fastapi", "starlette", "onnxruntime")
ENGINE = ("nmafc.engine", "nmafc.storage", "nmafc.api", "nmafc.embedding", "nmafc.memory")


def _loaded_after(code: str) -> set[str]:
    """The top-level and ``nmafc.*`` packages loaded once ``code`` ran in a new interpreter."""
    probe = textwrap.dedent(code) + textwrap.dedent(
        """
        import json, sys
        names = {n.split(".")[0] for n in sys.modules}
        names |= {".".join(n.split(".")[:2]) for n in sys.modules if n.startswith("nmafc.")}
        print(json.dumps(sorted(names)))
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def _heavy(loaded: set[str], *extra: str) -> list[str]:
    return sorted(loaded & {*STORES_AND_FRAMEWORKS, *ENGINE, *extra})


def test_import_nmafc_loads_nothing_but_the_package_root() -> None:
    loaded = _loaded_after("import nmafc")
    assert _heavy(loaded, "numpy", "pydantic") == []
    assert {n for n in loaded if n.startswith("nmafc.")} == set()


def test_the_public_names_still_resolve_from_the_package_root() -> None:
    loaded = _loaded_after(
        """
        import nmafc
        assert nmafc.Tier.CORE_ANCHOR.value == "CoreAnchor"
        assert issubclass(nmafc.NmafcError, Exception)
        assert set(nmafc.__all__) <= set(dir(nmafc))
        """
    )
    assert "nmafc.engine" not in loaded  # Tier, NmafcError & co. do not need the engine
    everything = _loaded_after("from nmafc import *\nassert SyncMemory and Settings")
    assert {"nmafc.engine", "nmafc.memory", "nmafc.settings"} <= everything


def test_an_unknown_name_on_the_package_root_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = nmafc.Nope  # type: ignore[attr-defined]


CORE_MODULES = sorted(
    m.name for m in pkgutil.walk_packages(nmafc.core.__path__, "nmafc.core.") if not m.ispkg
)


@pytest.mark.parametrize("module", CORE_MODULES)
def test_every_core_module_imports_without_stores_frameworks_or_the_engine(module: str) -> None:
    assert _heavy(_loaded_after(f"import {module}"), "httpx") == []


def test_the_client_needs_only_httpx_pydantic_and_the_wire_models() -> None:
    loaded = _loaded_after("import nmafc.client")
    assert _heavy(loaded, "numpy", "uvicorn", "tokenizers") == []
    assert {"httpx", "pydantic", "nmafc.wire"} <= loaded


def test_the_wire_models_import_only_the_core() -> None:
    loaded = _loaded_after("import nmafc.wire")
    nmafc_parts = {n for n in loaded if n.startswith("nmafc.")}
    assert nmafc_parts <= {"nmafc.wire", "nmafc.core", "nmafc.errors"}
    assert _heavy(loaded, "numpy", "httpx") == []


HELP = [["--help"], ["serve", "--help"], ["bench", "http", "--help"],
        ["eval", "locomo", "--help"], ["keys", "create", "--help"]]  # fmt: skip


@pytest.mark.parametrize("argv", HELP)
def test_cli_help_imports_no_store_framework_or_model(argv: list[str]) -> None:
    loaded = _loaded_after(
        f"""
        import contextlib, io
        from nmafc.cli.main import main
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            main({argv!r})
        """
    )
    assert _heavy(loaded, "numpy", "tokenizers", "uvicorn", "nmafc.evaluation", "nmafc.bench") == []

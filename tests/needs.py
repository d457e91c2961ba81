"""What a test needs beyond ``.venv``: skipped where it is missing, a failure in CI.

On a workstation a test whose tool is absent is skipped with the command that installs
it. In CI (``CI=true``, as ``.ci/run`` runs) nothing may be skipped silently: the same
absence fails the test, naming the tool and the install command.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """Whether this run is CI's (``CI`` set to true, as CI services and ``.ci/run`` do)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(what: str, install: str) -> NoReturn:
    """Skip the test for want of ``what`` (fail it under CI); ``install`` says how to get it."""
    message = f"{what} is missing: {install}"
    if in_ci():
        pytest.fail(f"{message} (CI=true: a missing tool fails the run instead of a skip)")
    pytest.skip(message)

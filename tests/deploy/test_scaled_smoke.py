"""``make scaled-smoke``: two replicas and a worker on PostgreSQL + S3, as processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from nmafc.testing.scaled_smoke import run_scaled_smoke

pytestmark = [pytest.mark.postgres, pytest.mark.s3]


def test_two_replicas_and_a_worker_share_the_stores_and_maintain_each_scope_once(
    tmp_path: Path, postgres_available: str
) -> None:
    report = run_scaled_smoke(tmp_path, postgres_available, scopes=3, rounds=2)
    # run_scaled_smoke raises unless writes through replica 1 are read through replica 2
    # and the three processes together ran exactly one pass per scope and interval.
    assert report.passes == 3 * 2
    assert set(report.passes_by_process) == {"replica-1", "replica-2", "worker"}

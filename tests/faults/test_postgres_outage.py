"""PostgreSQL (the Cold ROM) stops mid-load and comes back: 503s, nothing acknowledged lost."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from nmafc.bench.load_bench import LoadOptions
from nmafc.testing.processes import NmafcProcess

from .conftest import VERBATIM, PrivatePostgres
from .load import BackgroundLoad, verify_acks

pytestmark = [pytest.mark.faults, pytest.mark.postgres]
WARM_S, OUTAGE_S, AFTER_S = 3.0, 4.0, 6.0


def test_a_postgres_restart_mid_load_loses_no_acknowledged_write(
    tmp_path: Path,
    private_postgres: PrivatePostgres,
    nmafc_processes: Callable[[dict[str, str]], NmafcProcess],
) -> None:
    env = {
        **VERBATIM,
        "NMAFC_DATA_DIR": str(tmp_path / "data"),
        "NMAFC_COLD_URI": private_postgres.uri,
        "NMAFC_COLD_CONNECT_TIMEOUT_S": "1",
    }
    service = nmafc_processes(env).start()
    options = LoadOptions(
        duration_s=WARM_S + OUTAGE_S + AFTER_S, writers=3, readers=1, timeout_s=20
    )
    load = BackgroundLoad(service.url, options)
    time.sleep(WARM_S)
    # "immediate" is a crash stop: restart runs WAL recovery, so durability is on trial too.
    private_postgres.stop("immediate")
    down_at = load.since_start()
    time.sleep(OUTAGE_S)
    private_postgres.start()
    up_at = load.since_start()
    run = load.result()

    writes = [o for o in run.outcomes if o.op == "write"]
    during = [o for o in run.outcomes if down_at + 0.5 < o.at < up_at - 0.5]
    assert {o.status for o in run.outcomes} <= {"200", "201", "503"}, (
        run.statuses(),
        service.log()[-3000:],
    )
    assert during
    assert all(o.status == "503" for o in during), run.statuses()
    assert run.missing_retry_after() == 0
    assert all(o.retry_after == "2" for o in run.outcomes if o.status == "503")
    # It recovered by itself: writes started after PostgreSQL came back were acknowledged.
    recovered = [o for o in writes if o.at > up_at + 1.0]
    assert recovered
    assert all(o.ok for o in recovered), [o.status for o in recovered]
    assert sum(1 for o in writes if o.at < down_at and o.ok) > 0

    verification = verify_acks(service.url, run)
    assert verification.checked == len(run.acks) > 0
    assert verification.lost == []
    assert httpx.get(f"{service.url}/readyz", timeout=10).status_code == 200

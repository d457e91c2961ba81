"""Declared background services: what a round does, switches, failures, leases."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from nmafc.core.scope import Scope
from nmafc.core.turns import Message
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import StoreUnavailable
from nmafc.services import (
    CompactionService,
    FlushService,
    MaintenanceService,
    Service,
    ServiceRun,
    declared_services,
    run_services,
)
from nmafc.services.base import BACKOFF_CAP_S
from nmafc.settings import Settings
from nmafc.storage.cold import ColdStore
from nmafc.storage.cold.leases import lease_key


def _say(engine: MemoryEngine, scope: Scope, n: int) -> None:
    engine.remember(scope, [Message(f"message {i}") for i in range(n)])


def test_a_round_maintains_each_due_scope_once(engine: MemoryEngine) -> None:
    every = engine.settings.consolidation.every_turns
    due, quiet = Scope("agent-x", "due"), Scope("agent-y", "quiet")
    _say(engine, due, every)
    _say(engine, quiet, 1)
    service = MaintenanceService(engine, enabled=True, interval_s=1, limit=10)
    assert service.run_once() == 1
    assert [r.scope for r in service.reports] == [due]
    assert service.run_once() == 0  # nothing is due twice
    _say(engine, due, every)
    assert service.run_once() == 1


def test_a_scope_leased_elsewhere_is_left_alone(engine: MemoryEngine) -> None:
    scope = Scope("agent-x", "busy")
    _say(engine, scope, engine.settings.consolidation.every_turns)
    service = MaintenanceService(engine, enabled=True, interval_s=1, limit=10)
    postgres = engine.ctx.cold.dialect == "postgresql"
    # Another replica (its own connection pool) on PostgreSQL; this process on SQLite.
    holder = (
        ColdStore.open(engine.settings.resolved_cold_uri(), migrate=False)
        if postgres
        else engine.ctx.cold
    )
    try:
        with holder.lease(f"maintain\x1f{scope.agent_id}\x1f{scope.conversation_id}") as held:
            assert held
            assert service.run_once() == 0
            assert engine.maintenance_due(scope)
        assert service.run_once() == 1
    finally:
        if postgres:
            holder.close()
    assert not engine.maintenance_due(scope)


def test_leases_exclude_each_other_across_connections(settings: Settings) -> None:
    first = ColdStore.open(settings.resolved_cold_uri())
    second = ColdStore.open(settings.resolved_cold_uri(), migrate=False)
    try:
        with first.lease("job") as held:
            assert held
            with (second if first.dialect == "postgresql" else first).lease("job") as again:
                assert not again
            with first.lease("another job") as other:
                assert other
        with second.lease("job") as held_later:
            assert held_later
    finally:
        first.close()
        second.close()


_HOLD_A_LEASE = """
import sys
from nmafc.storage.cold import ColdStore
store = ColdStore.open(sys.argv[1], migrate=False)
with store.lease("job") as held:
    print("held" if held else "refused", flush=True)
    sys.stdin.readline()
"""


def test_a_sqlite_lease_excludes_the_other_workers_until_they_let_go_or_die(
    tmp_path: Path,
) -> None:
    uri = f"sqlite:///{tmp_path / 'cold.db'}"
    store = ColdStore.open(uri)
    worker = subprocess.Popen(
        [sys.executable, "-c", _HOLD_A_LEASE, uri],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "held"
        with store.lease("job") as held:
            assert not held
        with store.lease("another job") as other:
            assert other
        worker.kill()  # kill -9: the kernel releases what the process held
        worker.wait(10)
        with store.lease("job") as held:
            assert held
    finally:
        worker.kill()
        store.close()


def test_lease_keys_are_stable_signed_64_bit() -> None:
    key = lease_key("maintain\x1fa\x1fc")
    assert key == lease_key("maintain\x1fa\x1fc") != lease_key("maintain\x1fa\x1fd")
    assert -(2**63) <= key < 2**63


def test_flush_and_compaction_rounds(engine: MemoryEngine) -> None:
    scope = Scope("agent-x", "c")
    _say(engine, scope, 3)
    assert FlushService(engine, enabled=True, interval_s=1).run_once() >= 0
    assert CompactionService(engine, enabled=True, interval_s=1, longest_s=0).run_once() >= 0


def test_compaction_runs_when_the_table_is_due_not_only_on_its_timer(
    engine: MemoryEngine,
) -> None:
    bound = engine.settings.maintenance.compaction_max_fragments
    service = CompactionService(engine, enabled=True, interval_s=1, longest_s=3600)
    table = engine.ctx.hot.store._table
    assert service.run_once() == 0  # nothing due: the hour has not passed
    for index in range(bound):
        _say(engine, Scope("agent-x", f"c{index}"), 1)
    assert table.stats()["fragment_stats"]["num_fragments"] >= bound
    assert service.run_once() > 0
    assert table.stats()["fragment_stats"]["num_fragments"] < bound


def test_services_are_declared_from_settings(engine: MemoryEngine) -> None:
    settings = engine.settings.model_copy(
        update={
            "maintenance": engine.settings.maintenance.model_copy(
                update={"pass_interval_s": 7.0, "compaction_enabled": False}
            )
        }
    )
    services = {s.name: s for s in declared_services(engine, settings)}
    assert set(services) == {"maintenance", "compaction", "flush", "remember_queue"}
    assert services["maintenance"].interval_s == 7.0
    assert services["compaction"].enabled is False


class _Counting(Service):
    name = "counting"

    def __init__(self, *, enabled: bool, fail: bool = False) -> None:
        super().__init__(enabled=enabled, interval_s=0.01)
        self.rounds = 0
        self.fail = fail

    def run_once(self) -> int:
        self.rounds += 1
        if self.fail:
            raise RuntimeError("boom")
        return 1


@pytest.mark.anyio
async def test_enabled_services_run_disabled_ones_never_and_failures_are_observed() -> None:
    on, off, failing = (
        _Counting(enabled=True),
        _Counting(enabled=False),
        _Counting(enabled=True, fail=True),
    )
    runs: list[ServiceRun] = []
    with anyio.move_on_after(0.3):
        await run_services([on, off, failing], runs.append)
    assert on.rounds >= 3
    assert off.rounds == 0
    assert failing.rounds >= 3
    assert any(r.failed for r in runs)
    assert any(not r.failed and r.items == 1 for r in runs)


class _Outage(Service):
    name = "outage"

    def __init__(self) -> None:
        super().__init__(enabled=True, interval_s=1.0)
        self.down = True

    def run_once(self) -> int:
        if self.down:
            raise StoreUnavailable("The Hot store (S3) did not answer within 8s.", fix="Wait.")
        return 1


@pytest.mark.anyio
async def test_rounds_deferred_by_an_outage_wait_twice_as_long_each_time_up_to_a_cap() -> None:
    service = _Outage()
    delays = []
    for _ in range(8):
        await service._round(None)
        delays.append(service.next_delay_s)
    assert delays[:4] == [2.0, 4.0, 8.0, 16.0]
    assert delays[4:] == [BACKOFF_CAP_S] * 4
    service.down = False
    await service._round(None)  # the store answers again: back to the interval
    assert service.next_delay_s == service.interval_s

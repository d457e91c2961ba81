"""A working set's records read from its load's columns until they are put anew or removed."""

from __future__ import annotations

from nmafc.core.record_columns import RecordColumns
from nmafc.index.working_records import WorkingRecords
from tests.core.factories import record


def _loaded(n: int) -> tuple[WorkingRecords, dict[str, int], list]:  # type: ignore[type-arg]
    records = [record(id=f"r{i}", source_turn_ids=(i, 100)) for i in range(n)]
    row_of = {r.id: i for i, r in enumerate(records)}
    held = WorkingRecords({})
    held.fill(RecordColumns.of(records), row_of)
    return held, row_of, records


def test_a_loaded_set_reads_as_a_mapping_of_its_records() -> None:
    held, _, records = _loaded(5)
    assert len(held) == 5
    assert list(held) == [r.id for r in records]
    assert held["r3"] == records[3]
    assert held.get("nope") is None
    assert "r4" in held
    assert "nope" not in held
    assert 4 not in held
    assert dict(held) == {r.id: r for r in records}


def test_a_record_put_anew_shadows_its_loaded_row_and_a_removed_one_is_gone() -> None:
    held, row_of, records = _loaded(5)
    changed = records[1].evolve(content="moved", version=2)
    held.put(changed)
    assert held["r1"] == changed
    assert len(held) == 5
    assert held.pop("r2") == records[2]
    del row_of["r2"]
    assert "r2" not in held
    assert held.pop("r2") is None
    assert len(held) == 4
    assert sorted(held) == ["r0", "r1", "r3", "r4"]


def test_a_new_record_on_a_removed_record_s_row_is_not_read_from_that_row() -> None:
    held, row_of, records = _loaded(3)
    held.pop("r0")
    del row_of["r0"]
    newcomer = record(id="n0", content="new")
    row_of["n0"] = 0  # the working set hands the freed row on
    held.put(newcomer)
    assert held["n0"] == newcomer
    assert dict(held) == {"r1": records[1], "r2": records[2], "n0": newcomer}


def test_source_turns_come_from_every_record_but_the_one_left_out() -> None:
    held, row_of, _ = _loaded(3)
    held.put(record(id="n", source_turn_ids=(7,)))
    row_of["n"] = 3
    assert held.source_turns() == {0, 1, 2, 7, 100}
    assert held.source_turns(excluding="r1") == {0, 2, 7, 100}
    assert held.source_turns(excluding="n") == {0, 1, 2, 100}
    held.pop("r0")
    assert held.source_turns() == {1, 2, 7, 100}


def test_a_loaded_record_costs_a_fraction_of_a_record_put_as_an_object() -> None:
    held, _, records = _loaded(1_000)
    loaded = held.nbytes
    for r in records:
        held.put(r.evolve(version=2))
    assert loaded < held.nbytes / 2

"""A scope's records held column by column give back each record exactly as it was."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest

from nmafc.core.record_columns import RecordColumns
from nmafc.core.tiers import Tier
from tests.core.factories import record


def _varied() -> list:  # type: ignore[type-arg]
    return [
        record(related_entities=("melanie", "jon"), source_turn_ids=(3, 9), k=2),
        record(tier=Tier.CORE_ANCHOR, expires_turn=math.inf, entity="melanie"),
        record(content="", entity="", related_entities=(), source_turn_ids=()),
        record(
            content="Zoë's café — 東京 🎉",
            importance=0.9,
            weight0=2.5,
            anchor_turn=41.0,
            valid_at=40.0,
            valid_at_time=datetime(1999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC),
            version=7,
        ),
        record(tier=Tier.EPHEMERAL_STATE, related_entities=("caroline_support_group",)),
    ]


def test_every_record_comes_back_equal_field_by_field() -> None:
    records = _varied()
    columns = RecordColumns.of(records)
    assert len(columns) == len(records)
    assert [columns.record(row) for row in range(len(records))] == records
    assert columns.entities() == [r.entity for r in records]
    assert columns.contents() == [r.content for r in records]


def test_a_repeated_entity_is_one_value_whether_a_record_is_about_it_or_links_it() -> None:
    columns = RecordColumns.of(_varied())
    assert len(columns.values) == len(set(columns.values))
    about = columns.record(1).entity
    linked = columns.record(0).related_entities[0]
    assert about == linked == "melanie"
    assert about is linked


def test_the_source_turns_of_some_rows_are_gathered_in_row_order() -> None:
    columns = RecordColumns.of(_varied())
    assert columns.source_turns_of(np.array([0, 2])).tolist() == [3, 9]
    assert columns.source_turns_of(np.array([2], dtype=np.intp)).tolist() == []


def test_columns_hold_one_scope_s_live_records_only() -> None:
    with pytest.raises(ValueError, match="one scope"):
        RecordColumns.of([record(), record(conversation_id="other")])
    with pytest.raises(ValueError, match="live records"):
        RecordColumns.of([record(invalid_at=3.0)])
    assert len(RecordColumns.of([])) == 0


def test_columns_take_a_fraction_of_the_objects_bytes() -> None:
    records = [record(content=f"Caroline said fact number {i} today") for i in range(1_000)]
    columns = RecordColumns.of(records)
    # A record object with its strings was ≈ 540 bytes at 10^5 records (tracemalloc).
    assert columns.nbytes / len(records) < 200

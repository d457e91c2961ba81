"""Replaying the log is a left fold over record snapshots."""

from nmafc.core.events import Event, EventKind, diff, fold, net_changes
from nmafc.core.lifecycle import InvalidReason, invalidate

from .factories import T0, record


def test_fold_keeps_valid_snapshots_and_drops_invalidated_ones() -> None:
    paris = record(entity="home", content="lives in Paris")
    berlin = record(entity="home", content="lives in Berlin")
    log = [
        Event(EventKind.ADD, 1, (paris,)),
        Event(EventKind.ADD, 5, (berlin,)),
        Event(EventKind.INVALIDATE, 5, (invalidate(paris, 5, T0, InvalidReason.OVERRIDE),)),
    ]
    assert fold(log) == {berlin.id: berlin}
    assert fold(log[:2]) == {paris.id: paris, berlin.id: berlin}


def test_net_changes_collapse_a_run_into_one_batch() -> None:
    a, b = record(), record()
    changes = net_changes(
        [
            Event(EventKind.ADD, 1, (a,)),
            Event(EventKind.ADD, 2, (b,)),
            Event(EventKind.REINFORCE, 3, (a.evolve(k=1),)),
            Event(EventKind.DELETE, 4, (invalidate(b, 4, T0, InvalidReason.DELETED),)),
        ]
    )
    assert changes.upserts == {a.id: a.evolve(k=1)}
    assert changes.removed == {b.id}


def test_diff_is_what_turns_one_working_set_into_another() -> None:
    a, b, c = record(), record(), record()
    delta = diff({a.id: a, b.id: b}, {a.id: a, b.id: b.evolve(k=2), c.id: c})
    assert set(delta.upserts) == {b.id, c.id}
    assert delta.removed == set()
    assert diff({a.id: a}, {}).removed == {a.id}


def test_event_payload_round_trips() -> None:
    r = record(related_entities=("x",), source_turn_ids=(3, 4))
    event = Event(EventKind.ADD, 2, (r,), record_id=r.id, detail={"why": "test"})
    back = Event.from_row(
        kind="add",
        turn=2,
        payload=event.payload(),
        record_id=r.id,
        seq=1,
        id=9,
        created_at=event.created_at,
    )
    assert back.upserts == (r,)
    assert back.detail == {"why": "test"}
    assert back.seq == 1


def test_an_event_closing_records_by_id_takes_them_out_like_a_closed_snapshot() -> None:
    a, b, c = record(), record(), record()
    log = [
        Event(EventKind.ADD, 1, (a, b, c)),
        Event(EventKind.PRUNE, 5, closed=(a.id, b.id), detail={"reason": "expired"}),
    ]
    assert fold(log) == {c.id: c}
    changes = net_changes(log)
    assert changes.upserts == {c.id: c}
    assert changes.removed == {a.id, b.id}


def test_closed_ids_round_trip_through_the_payload_and_old_payloads_have_none() -> None:
    event = Event(EventKind.PRUNE, 5, closed=("x", "y"), detail={"reason": "archived"})
    back = Event.from_row(
        kind="prune", turn=5, payload=event.payload(), record_id=None, seq=1, id=2,
        created_at=event.created_at,
    )  # fmt: skip
    assert back.closed == ("x", "y")
    assert "closed" not in Event(EventKind.ADD, 1, (record(),)).payload()

"""Near-duplicate merging and dead-link cleanup."""

from nmafc.core.consolidation import plan_merges, plan_relinks
from nmafc.core.decay import DecayParams
from nmafc.core.tiers import Tier

from .factories import T0, record


def test_near_duplicates_merge_into_one_strengthened_record() -> None:
    a = record(k=3, related_entities=("melanie",), source_turn_ids=(1,))
    b = record(k=1, related_entities=("lgbtq_center",), source_turn_ids=(7,), importance=0.9)
    merges = plan_merges([(a.id, b.id, 0.97)], {a.id: a, b.id: b}, 0.95, 40, T0, DecayParams())
    assert len(merges) == 1
    survivor, absorbed = merges[0].survivor, merges[0].absorbed
    assert survivor.id == a.id  # the more reinforced record survives
    assert survivor.k == 4
    assert survivor.weight0 == 1.0
    assert survivor.anchor_turn == 40
    assert survivor.related_entities == ("melanie", "lgbtq_center")
    assert survivor.source_turn_ids == (1, 7)
    assert survivor.importance == 0.9
    assert absorbed.id == b.id
    assert absorbed.invalid_reason == "merged"
    assert absorbed.invalid_at == 40


def test_pairs_below_threshold_or_reused_records_do_not_merge() -> None:
    a, b, c = record(), record(), record()
    records = {r.id: r for r in (a, b, c)}
    merges = plan_merges(
        [(a.id, b.id, 0.99), (a.id, c.id, 0.98), (b.id, c.id, 0.80)],
        records,
        0.95,
        10,
        T0,
        DecayParams(),
    )
    assert [(m.survivor.id, m.absorbed.id) for m in merges] in ([(a.id, b.id)], [(b.id, a.id)])


def test_the_more_permanent_tier_wins_a_tie_on_reinforcement() -> None:
    core = record(tier=Tier.CORE_ANCHOR, k=0)
    active = record(tier=Tier.ACTIVE_CONTEXT, k=0)
    merge = plan_merges(
        [(active.id, core.id, 0.99)], {core.id: core, active.id: active}, 0.95, 1, T0, DecayParams()
    )[0]
    assert merge.survivor.id == core.id


def test_links_to_entities_that_left_memory_are_dropped() -> None:
    linked = record(related_entities=("old_job", "melanie", "never_had_a_fact"))
    untouched = record(related_entities=("melanie",))
    changed = plan_relinks([linked, untouched], dead_entities={"old_job"})
    assert [r.id for r in changed] == [linked.id]
    assert changed[0].related_entities == ("melanie", "never_had_a_fact")


def test_facts_that_differ_in_a_number_never_merge() -> None:
    two = record(content="Caroline has 2 dogs")
    three = record(content="Caroline has 3 dogs")
    records = {two.id: two, three.id: three}
    assert plan_merges([(two.id, three.id, 0.99)], records, 0.95, 1, T0, DecayParams()) == []

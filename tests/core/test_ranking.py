"""Reciprocal Rank Fusion."""

import pytest

from nmafc.core.ranking import rrf


def test_a_document_in_two_lists_beats_one_ranked_first_in_only_one() -> None:
    fused = rrf({"vector": ["a", "b"], "keyword": ["c", "b"]}, k=60)
    assert fused[0].key == "b"
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 62)
    assert fused[0].ranks == {"vector": 2, "keyword": 2}


def test_list_weights_scale_contributions_and_ties_keep_first_seen_order() -> None:
    fused = rrf({"vector": ["a"], "graph": ["b"]}, k=60, weights={"graph": 0.5})
    assert [f.key for f in fused] == ["a", "b"]
    assert fused[1].score == pytest.approx(0.5 / 61)
    tied = rrf({"x": ["p"], "y": ["q"]})
    assert [f.key for f in tied] == ["p", "q"]


def test_mmr_spreads_choices_across_dissimilar_items() -> None:
    from nmafc.core.ranking import mmr

    # Items 0 and 1 are near-duplicates; 2 is different but slightly less relevant.
    similar = {(0, 1): 0.99, (0, 2): 0.1, (1, 2): 0.1}

    def sim(a: int, b: int) -> float:
        return similar[(min(a, b), max(a, b))]

    assert mmr([1.0, 0.95, 0.9], sim, diversity=0.0, limit=3) == [0, 1, 2]
    assert mmr([1.0, 0.95, 0.9], sim, diversity=0.5, limit=3) == [0, 2, 1]

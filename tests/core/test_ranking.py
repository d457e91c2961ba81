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

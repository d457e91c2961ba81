"""Embedding batches are bounded by padded tokens, not only by the number of texts."""

from __future__ import annotations

from nmafc.embedding.onnx_minilm import MAX_BATCH_TOKENS, token_batches


def test_every_text_is_in_one_batch_shortest_first() -> None:
    lengths = [30, 256, 5, 256, 12, 100]
    batches = token_batches(lengths, max_texts=16, max_tokens=MAX_BATCH_TOKENS)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    flat = [lengths[i] for batch in batches for i in batch]
    assert flat == sorted(lengths)


def test_a_batch_padded_to_its_longest_text_stays_within_the_token_budget() -> None:
    lengths = [256] * 20 + [8] * 40
    batches = token_batches(lengths, max_texts=16, max_tokens=1024)
    for batch in batches:
        assert len(batch) <= 16
        assert len(batch) * max(lengths[i] for i in batch) <= 1024
    assert sum(1 for batch in batches if lengths[batch[0]] == 256) == 5  # 4 long texts each


def test_a_text_longer_than_the_budget_goes_alone() -> None:
    assert token_batches([2000, 2000], max_texts=16, max_tokens=1024) == [[0], [1]]

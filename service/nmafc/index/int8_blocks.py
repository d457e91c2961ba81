"""Coarse scores of 7-bit queries against a block of int8 rows, through two kernels.

A block's coarse score is the integer dot product of a query's codes with a row's, times
the row's scale. A *full* block is scored by ONNX Runtime's ``MatMulIntegerToFloat`` (MLAS)
with the rows prepacked as a constant operand and the scaling fused into the same pass: on
an AVX2 host 1.9× faster than NumKong's packed kernel for a batch of 8 queries (0.92
against 1.72 ms per 16,384 rows, scaling not included for NumKong). It takes ≈ 20 ms to
build, so the block still filling, rebuilt at each append, stays on NumKong's kernel, which
packs in ≈ 1.7 ms.

MLAS multiplies unsigned by signed bytes; on AVX2 it adds adjacent products in 16 bits with
saturation. Queries are therefore quantised to ±63 and shifted by 64 into [1, 127]: a pair
of products is at most 2 · 127 · 127 = 32,258 < 32,767, so the sums are exact, and the
shift is the kernel's zero point, taken off in integers.
"""

from __future__ import annotations

import tempfile

import numkong as nk
import numpy as np
import numpy.typing as npt

from nmafc.ort import import_onnxruntime

QUERY_LEVELS = 63  # queries use 7 bits (see above); rows keep 8
_SHIFT = 64
# RSS of a full block's session per code it holds (packed copy, scales): 542 bytes a row at
# 384 dimensions, measured over ten blocks.
_SESSION_BYTES_PER_CODE = 1.41

Codes = npt.NDArray[np.int8]
Scores = npt.NDArray[np.float32]


class FillingBlock:
    """A block still taking rows: NumKong's packed kernel, cheap to rebuild."""

    def __init__(self, codes: Codes, scale: Scores) -> None:
        self.rows = len(codes)
        self.codes = codes  # kept: the next append repacks them with the new rows
        self._pack = nk.dots_pack(codes)
        self._scale = scale.copy()

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes + self._pack.nbytes + self._scale.nbytes)

    def scores(self, queries: Codes) -> Scores:
        dots = np.asarray(nk.dots_packed(queries, self._pack))[:, : self.rows]
        found: Scores = np.multiply(dots, self._scale, dtype=np.float32)
        return found


class GemmBlock:
    """A full block: ONNX Runtime's MatMulIntegerToFloat with the rows as a prepacked constant.

    The rows go into the model as its constant ``B``, which ONNX Runtime copies, prepacks
    and then releases, so the block holds one packed copy of its codes (≈ 540 bytes a row
    with the session, measured by RSS) and not the codes themselves: a changed row rebuilds
    its block from the vectors. The model is read from a temporary file because a session
    made from bytes keeps those bytes for its whole life (ONNX Runtime's Python wrapper,
    ``_model_bytes``). Lending ONNX Runtime our array instead (``add_initializer``) had
    cost 1,310 bytes a row: ours, the packed copy and the serialised placeholder.
    """

    def __init__(self, codes: Codes, scale: Scores) -> None:
        from onnx import TensorProto, helper, numpy_helper

        ort = import_onnxruntime()

        self.rows, self.dim = codes.shape
        # The kernel computes (A − 64) · B · scale with B (dim × rows) constant.
        constants = [
            numpy_helper.from_array(np.ascontiguousarray(codes.T), "B"),
            numpy_helper.from_array(np.array(1.0, dtype=np.float32), "query_scale"),
            numpy_helper.from_array(np.ascontiguousarray(scale, dtype=np.float32), "row_scale"),
            numpy_helper.from_array(np.array(_SHIFT, dtype=np.uint8), "query_zero"),
        ]
        graph = helper.make_graph(
            [
                helper.make_node(
                    "MatMulIntegerToFloat",
                    ["A", "B", "query_scale", "row_scale", "query_zero"],
                    ["Y"],
                    domain="com.microsoft",
                )
            ],
            "int8_block",
            [helper.make_tensor_value_info("A", TensorProto.UINT8, [None, self.dim])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [None, self.rows])],
            constants,
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
        )
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        with tempfile.NamedTemporaryFile(prefix="nmafc-int8-", suffix=".onnx") as file:
            file.write(model.SerializeToString())
            file.flush()
            self._session = ort.InferenceSession(
                file.name, sess_options=options, providers=["CPUExecutionProvider"]
            )

    @property
    def nbytes(self) -> int:
        return int(_SESSION_BYTES_PER_CODE * self.rows * self.dim)

    def scores(self, queries: Codes) -> Scores:
        unsigned = (queries.astype(np.int16) + _SHIFT).astype(np.uint8)  # in [1, 127]
        found: Scores = self._session.run(None, {"A": unsigned})[0]
        return found

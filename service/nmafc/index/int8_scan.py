"""An int8 copy of a working set's vectors, scanned first and then re-ranked exactly.

A float32 scan of a large working set is bound by memory bandwidth (≈ 13 ms for one query
at 100,000 × 384 here). Each row kept as int8 with its own scale is a quarter of the bytes,
multiplied by the queries in blocks of integer kernels (see :mod:`int8_blocks`). The codes
are derived from the working set's half-precision vectors, and only the block still
filling keeps them: a full block's kernel holds its own packed copy, and a changed row
rebuilds its block from the vectors.

The result stays exact with respect to those vectors. The coarse scores pick ``8k``
candidates, which are re-scored in float32 from the stored vectors. Rounding moves a score
by at most a bound computed from each row's and the query's stored rounding error, so no
row outside the candidates can beat the k-th exact score when that score exceeds the
lowest candidate's coarse score by more than the bound.
When it does not (vectors that barely cluster, or a near-tie at the cut), every row whose
coarse score comes within the bound of the k-th exact score is re-scored too: rows below
that cannot reach the top k, so the result is exact whatever the data.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from nmafc.index.half import Half, widened
from nmafc.index.int8_blocks import QUERY_LEVELS, FillingBlock, GemmBlock
from nmafc.index.top_k import best_rows

Vector = npt.NDArray[np.float32]
Rows = npt.NDArray[np.intp]

BLOCK_ROWS = 16_384  # rows multiplied together by one kernel
_LEVELS = 127
# Covers float32 rounding of a few-hundred-term dot product and of the coarse scaling.
_SLACK = 1e-4
# Rows quantised at a time: a piece's temporaries stay in cache. A 10^5-row load took
# 0.19-0.20 s in pieces of a block (16,384 rows) and 0.07 s in pieces of 1,024.
_QUANTISE_ROWS = 1024
_WIDTH = 8  # candidates re-scored per result wanted: enough to certify most real queries


def quantise(
    vectors: Vector, levels: int = _LEVELS
) -> tuple[npt.NDArray[np.int8], Vector, Vector, Vector]:
    """Codes in ±``levels``, scale, rounding error ‖x − x̂‖ and norm ‖x̂‖ of each row."""
    vectors = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(vectors).max(axis=1)
    scale = np.where(peak > 0, peak / levels, 1.0).astype(np.float32)
    codes = np.clip(np.rint(vectors / scale[:, None]), -levels, levels).astype(np.int8)
    restored = codes.astype(np.float32) * scale[:, None]
    error = np.linalg.norm(vectors - restored, axis=1).astype(np.float32)
    norm = np.linalg.norm(restored, axis=1).astype(np.float32)
    return codes, scale, error, norm


class Int8Scan:
    """The int8 shadow of a working set's half-precision matrix, kept in step row by row.

    Not thread-safe on its own: the working set calls :meth:`mark` and :meth:`sync` under
    its exclusive lock and :meth:`search` under its shared one.
    """

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._scale = np.zeros(0, dtype=np.float32)
        self._error = np.zeros(0, dtype=np.float32)
        self._norm = np.zeros(0, dtype=np.float32)
        self._rows = 0  # the prefix of the matrix quantised so far
        self._changed: set[int] = set()
        self._max_error = 0.0  # over the quantised rows, for the rounding bound
        self._max_norm = 0.0
        self._blocks: list[FillingBlock | GemmBlock] = []
        self.widened = 0  # queries whose certificate needed more rows re-scored (a statistic)

    @property
    def nbytes(self) -> int:
        packed = sum(block.nbytes for block in self._blocks)
        return int(3 * self._scale.nbytes + packed)

    def mark(self, row: int) -> None:
        """Row ``row`` of the matrix holds a new vector."""
        if row < self._rows:
            self._changed.add(row)

    def sync(self, matrix: Half, n: int) -> None:
        """Quantise changed rows and rows ``[quantised, n)``, then rebuild touched blocks."""
        if n > len(self._scale):
            self._grow(max(n, len(matrix)))
        fresh = self._changed | set(range(self._rows, n))
        self._changed.clear()
        self._rows = max(self._rows, n)
        touched = {row // BLOCK_ROWS for row in fresh}
        for index in range(-(-n // BLOCK_ROWS)):
            start, stop = index * BLOCK_ROWS, min((index + 1) * BLOCK_ROWS, n)
            built = self._blocks[index : index + 1]
            if built and index not in touched and built[0].rows == stop - start:
                continue
            codes = self._codes(matrix, start, stop, fresh, built[0] if built else None)
            kind = GemmBlock if stop - start == BLOCK_ROWS else FillingBlock
            # Blocks fill in order, so this replaces block ``index`` or appends the next one.
            self._blocks[index : index + 1] = [kind(codes, self._scale[start:stop])]
        self._max_error = float(self._error[:n].max(initial=0.0))
        self._max_norm = float(self._norm[:n].max(initial=0.0))

    def _codes(
        self,
        matrix: Half,
        start: int,
        stop: int,
        fresh: set[int],
        built: FillingBlock | GemmBlock | None,
    ) -> npt.NDArray[np.int8]:
        """Codes of rows ``[start, stop)``: a filling block's own for its unchanged rows,
        the others (every row of a full block, which keeps none) quantised afresh."""
        codes = np.zeros((stop - start, self.dim), dtype=np.int8)
        if isinstance(built, FillingBlock):
            kept = built.codes[: stop - start]
            codes[: len(kept)] = kept
            appended = set(range(start + len(kept), stop))
            redo = np.array(
                sorted({r for r in fresh if start <= r < stop} | appended), dtype=np.intp
            )
        else:
            redo = np.arange(start, stop, dtype=np.intp)
        for first in range(0, len(redo), _QUANTISE_ROWS):
            part = redo[first : first + _QUANTISE_ROWS]
            found, scale, error, norm = quantise(widened(matrix[part]))
            codes[part - start] = found
            self._scale[part], self._error[part], self._norm[part] = scale, error, norm
        return codes

    def search(
        self,
        matrix: Half,
        alive: npt.NDArray[np.bool_],
        queries: Vector,
        k: int,
        *,
        all_alive: bool = False,
    ) -> list[tuple[Rows, Vector]]:
        """The ``k`` best live rows of ``matrix`` and their cosines for each query, exact.

        Best first, equal scores by row. Rows are ``[0, len(alive))``, all seen by :meth:`sync`
        (the last sync was with ``n = len(alive)``). ``all_alive`` tells that no row is dead,
        which spares a pass over ``alive``.
        """
        n = len(alive)
        if k <= 0:
            return [(np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.float32)) for _ in queries]
        codes, q_scale, q_error, _ = quantise(queries, QUERY_LEVELS)
        # Per-row scale applied, per-query scale not: it is positive, so it keeps the order.
        coarse = self._coarse(codes, n)
        if not all_alive and not alive.all():
            coarse[:, ~alive] = -np.inf
        max_error, max_norm = self._max_error, self._max_norm
        q_norm = np.linalg.norm(queries, axis=1)
        bounds = q_norm * max_error + q_error * max_norm + _SLACK * max(1.0, max_norm)
        found: list[tuple[Rows, Vector]] = []
        for i, query in enumerate(queries):
            rows, scores, rescored_more = _exact_top(
                matrix, alive, coarse[i], query, k, float(q_scale[i]), float(bounds[i])
            )
            self.widened += rescored_more
            found.append((rows, scores))
        return found

    def _coarse(self, codes: npt.NDArray[np.int8], n: int) -> Vector:
        """Integer dot products of ``codes`` with rows ``[0, n)`` times each row's scale."""
        coarse = np.empty((len(codes), n), dtype=np.float32)
        for index, block in enumerate(self._blocks):
            start = index * BLOCK_ROWS
            stop = min(start + block.rows, n)
            if start >= stop:
                break
            coarse[:, start:stop] = block.scores(codes)[:, : stop - start]
        return coarse

    def _grow(self, capacity: int) -> None:
        self._scale, self._error, self._norm = (
            np.concatenate([a, np.zeros(capacity - len(a), dtype=np.float32)])
            for a in (self._scale, self._error, self._norm)
        )


def _exact_top(
    matrix: Half,
    alive: npt.NDArray[np.bool_],
    coarse: Vector,
    query: Vector,
    k: int,
    query_scale: float,
    bound: float,
) -> tuple[Rows, Vector, bool]:
    """The exact top ``k`` live rows, best first with ties by row, and whether it widened.

    The ``_WIDTH · k`` best coarse rows are re-scored; if the k-th exact score does not
    clear every other row's coarse score + bound, each row that comes within the bound is
    re-scored as well.
    """
    n = len(alive)
    wanted = min(max(_WIDTH * k, k + 64), n)
    candidates = best_rows(coarse, wanted)
    candidates = candidates[alive[candidates]]
    exact = widened(matrix[candidates]) @ query
    order = np.lexsort((candidates, -exact))[:k]
    if len(candidates) < wanted or wanted == n:  # every live row was re-scored
        return candidates[order], exact[order], False
    kth = float(exact[order[-1]]) if len(order) == k else -np.inf
    # No row left out scores above its coarse score + bound <= the lowest candidate's + bound.
    if kth > float(coarse[candidates[-1]]) * query_scale + bound:
        return candidates[order], exact[order], False
    doubt = np.flatnonzero(coarse >= (kth - bound) / query_scale)
    doubt = doubt[alive[doubt]]
    exact = widened(matrix[doubt]) @ query
    order = np.lexsort((doubt, -exact))[:k]
    return doubt[order], exact[order], True

"""How many threads NumPy's BLAS may use in a server process: one by default.

OpenBLAS runs any matrix-vector product over more than a few dozen rows on every core, and
after the call its helper threads busy-wait (about 0.1 s) for more work. A recall scans a
working set once, so on a 2-core host the helper kept a whole core spinning between recalls:
≈ 30 ms of CPU per recall at 10^5 records and ≈ 27 ms already at 3,000, to save a few ms of
wall time on the scan. A matrix-vector product gives bit-identical scores on any thread
count (each score is one dot product); a matrix-matrix product (maintenance's merge
candidates) does not, so a fixed count also makes those the same on every host.
"""

from __future__ import annotations

from threadpoolctl import ThreadpoolController


def limit_blas_threads(threads: int) -> None:
    """Cap the BLAS thread pools of this process at ``threads`` (0 leaves them alone).

    The cap is process-wide: it is the native library's own setting, so every engine in
    the process shares it and the last one opened wins.
    """
    if threads > 0:
        ThreadpoolController().limit(limits=threads, user_api="blas")

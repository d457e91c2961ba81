"""ONNX Runtime, imported with its telemetry off: NMAFC runs offline.

Since 1.29, ONNX Runtime on Linux and macOS starts a telemetry uploader when it is imported:
it writes a device id and an event cache under ``~/.cache/Microsoft/DeveloperTools`` and
looks up ``mobile.events.data.microsoft.com``. ``ORT_DISABLE_TELEMETRY=1`` is its full
opt-out, read once, at import; ``disable_telemetry_events()`` only silences later events
(the uploader still starts). So NMAFC imports ONNX Runtime only through
:func:`import_onnxruntime`, which sets the variable before the first import (unless the
host set it already) and calls the API as well.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any

TELEMETRY_VARIABLE = "ORT_DISABLE_TELEMETRY"
log = logging.getLogger(__name__)
_lock = threading.Lock()
_warned = False


def import_onnxruntime() -> Any:
    """The ``onnxruntime`` module, its telemetry switched off before it first loads."""
    global _warned
    with _lock:
        first = "onnxruntime" not in sys.modules
        if first:
            os.environ.setdefault(TELEMETRY_VARIABLE, "1")
        elif os.environ.get(TELEMETRY_VARIABLE) is None and not _warned:
            _warned = True
            log.warning(
                "ONNX Runtime was imported before NMAFC could switch its telemetry off, so "
                "it may contact Microsoft. Fix: set %s=1 in the environment, or import "
                "nmafc's embedder before onnxruntime.",
                TELEMETRY_VARIABLE,
            )
        import onnxruntime

        if first:
            onnxruntime.disable_telemetry_events()  # for builds that ignore the variable
        return onnxruntime

"""What a benchmark ran on: core count, CPU model and the vector instructions that matter.

The int8 kernels behind embedding and scanning pick their code by instruction set (AVX2,
AVX-512 VNNI, AMX, Arm's dot product), so their speed differs between hosts by more than
the clock: from one day to the next, this project's shared host ran the same embedding and
scan 1.5 and 1.9 times slower. Reports name the host, so that runs on different ones are
not compared as if alike.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

# The instruction sets the embedder's and the scan's integer kernels pick between.
_SIMD = ("avx2", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "sve")


def describe(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """``cpus``, ``cpu`` (the model name) and ``simd`` (the sets above the CPU has)."""
    model, flags = platform.processor() or platform.machine(), set[str]()
    try:
        text = cpuinfo.read_text()
    except OSError:
        text = ""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        name = name.strip()
        if name == "model name":
            model = value.strip()
        elif name in ("flags", "Features"):
            flags.update(value.split())
    return {"cpus": os.cpu_count(), "cpu": model, "simd": [s for s in _SIMD if s in flags]}


def summary(machine: dict[str, Any]) -> str:
    """``2-core AMD EPYC (avx2)``, as a report's prose names the host."""
    simd = ", ".join(machine.get("simd") or []) or "no AVX2"
    return f"{machine['cpus']}-core {machine.get('cpu') or 'CPU'} ({simd})"

"""A benchmark report names the host's CPU and the vector instructions its kernels can use."""

from __future__ import annotations

from pathlib import Path

from nmafc.bench.machine import describe, summary

ZEN2 = """processor	: 0
model name	: AMD EPYC 7B12
flags		: fpu sse2 avx avx2 fma bmi2
"""
ICELAKE = """processor	: 0
model name	: Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz
flags		: fpu avx2 avx512f avx512bw avx512_vnni
"""


def test_the_model_and_the_instruction_sets_are_read_from_cpuinfo(tmp_path: Path) -> None:
    for text, model, simd in (
        (ZEN2, "AMD EPYC 7B12", ["avx2"]),
        (
            ICELAKE,
            "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz",
            ["avx2", "avx512f", "avx512_vnni"],
        ),
    ):
        path = tmp_path / "cpuinfo"
        path.write_text(text)
        machine = describe(path)
        assert machine["cpu"] == model
        assert machine["simd"] == simd
        assert summary(machine).endswith(f"({', '.join(simd)})")


def test_an_unreadable_cpuinfo_still_describes_the_host(tmp_path: Path) -> None:
    machine = describe(tmp_path / "missing")
    assert machine["cpus"] >= 1
    assert machine["simd"] == []
    assert "no AVX2" in summary(machine)

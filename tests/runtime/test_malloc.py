"""The serve runtime's allocator tuning: glibc only, explicit, never done by the library."""

from __future__ import annotations

import platform
import threading
from pathlib import Path

import pytest

from nmafc.runtime import malloc

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's allocator only")


@glibc
def test_arenas_are_capped_only_when_asked() -> None:
    assert malloc.cap_arenas(0) is False  # 0 keeps glibc's default
    assert malloc.cap_arenas(2) is True


@glibc
def test_trimming_runs_on_its_own_thread_until_stopped() -> None:
    stop = malloc.start_trimming(0.01)
    assert stop is not None
    trimmer = [t for t in threading.enumerate() if t.name == "nmafc-malloc-trim"]
    assert trimmer
    assert trimmer[0].daemon
    stop.set()
    trimmer[0].join(timeout=5)
    assert not trimmer[0].is_alive()
    assert malloc.start_trimming(0) is None


def test_the_library_leaves_its_host_allocator_alone(tmp_path: Path) -> None:
    from nmafc import SyncMemory
    from nmafc.settings import Settings

    trimmers = sum(t.name == "nmafc-malloc-trim" for t in threading.enumerate())
    with SyncMemory("agent", "c1", settings=Settings(data_dir=tmp_path)) as memory:
        memory.remember(["I moved to Lisbon in May."])
        memory.recall("Where do I live?")
        during = sum(t.name == "nmafc-malloc-trim" for t in threading.enumerate())
    assert during == trimmers

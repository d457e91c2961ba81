"""Working-set reads share the lock; a write has it alone and is not starved."""

from __future__ import annotations

import threading
import time

import pytest

from nmafc.rwlock import SharedLock

WAIT = 5.0


def _start(target: object) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


def test_readers_hold_it_together() -> None:
    lock = SharedLock()
    both_inside = threading.Barrier(2, timeout=WAIT)

    def read() -> None:
        with lock:
            both_inside.wait()  # breaks (raises) unless the other reader is inside too

    readers = [_start(read), _start(read)]
    for reader in readers:
        reader.join(WAIT)
    assert not both_inside.broken


def test_a_writer_waits_for_readers_and_readers_wait_for_a_writer() -> None:
    lock = SharedLock()
    order: list[str] = []
    reading, writing = threading.Event(), threading.Event()
    release_reader, release_writer = threading.Event(), threading.Event()

    def read_first() -> None:
        with lock:
            reading.set()
            release_reader.wait(WAIT)
            order.append("read done")

    def write() -> None:
        with lock.exclusive():
            order.append("write")
            writing.set()
            release_writer.wait(WAIT)
            order.append("write done")

    def read_after() -> None:
        with lock:
            order.append("late read")

    first = _start(read_first)
    assert reading.wait(WAIT)
    writer = _start(write)
    time.sleep(0.05)
    late = _start(read_after)  # arrives while the writer waits: must queue behind it
    time.sleep(0.05)
    assert order == []
    release_reader.set()
    assert writing.wait(WAIT)
    time.sleep(0.05)
    assert order == ["read done", "write"]
    release_writer.set()
    for thread in (first, writer, late):
        thread.join(WAIT)
    assert order == ["read done", "write", "write done", "late read"]


def test_an_error_inside_releases_it() -> None:
    lock = SharedLock()
    with pytest.raises(RuntimeError), lock.exclusive():
        raise RuntimeError("boom")
    with pytest.raises(RuntimeError), lock:
        raise RuntimeError("boom")

    done = threading.Event()

    def write() -> None:
        with lock.exclusive():
            done.set()

    _start(write).join(WAIT)
    assert done.is_set()


def test_a_writer_that_waits_too_long_gives_up_and_lets_readers_in_again() -> None:
    lock = SharedLock()
    release = threading.Event()
    entered = threading.Event()
    late_reader_in = threading.Event()

    def slow_read() -> None:
        with lock:
            entered.set()
            release.wait(WAIT)

    def late_read() -> None:
        with lock:
            late_reader_in.set()

    _start(slow_read)
    assert entered.wait(WAIT)
    with lock.exclusive(timeout_s=0.2) as alone:
        assert alone is False
        late = _start(late_read)  # a reader arriving after the writer gave up is not held
        assert late_reader_in.wait(WAIT)
    release.set()
    late.join(WAIT)
    with lock.exclusive(timeout_s=WAIT) as alone:
        assert alone is True

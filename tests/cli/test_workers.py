"""How ``serve --workers`` divides the machine among its worker processes."""

from __future__ import annotations

import pytest

from nmafc.cli.workers import with_core_share
from nmafc.settings import Settings


@pytest.mark.parametrize(
    ("cores", "workers", "threads", "expected"),
    [
        (2, 2, 0, 1),  # this machine: one model thread per worker, not two each
        (8, 2, 0, 4),
        (2, 4, 0, 1),  # never fewer than one
        (8, 2, 3, 3),  # a count the operator set is kept
        (8, 1, 0, 0),  # one worker: the embedder's own default
    ],
)
def test_each_worker_embeds_on_its_share_of_the_cores(
    monkeypatch: pytest.MonkeyPatch, cores: int, workers: int, threads: int, expected: int
) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: cores)
    settings = Settings(server={"workers": workers}, embedding={"threads": threads})
    shared = with_core_share(settings)
    assert shared.embedding.threads == expected
    assert shared.server == settings.server

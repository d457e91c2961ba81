"""The baselines, the budget packing, the timing wrapper and the progress bar."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import numpy as np
import pytest

from nmafc.core.turns import Message
from nmafc.embedding.base import Embedder
from nmafc.embedding.tokens import default_counter
from nmafc.evaluation.arms import Bm25Arm, NmafcArm, RagArm, import_batches, pack, turn_line
from nmafc.evaluation.loaders import Conversation, DialogTurn, Session
from nmafc.evaluation.progress import Progress
from nmafc.evaluation.timing import TimedEmbedder

DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def session(n: int, texts: list[str]) -> Session:
    speakers = ["Caroline", "Melanie"]
    turns = tuple(
        DialogTurn(f"D{n}:{i + 1}", speakers[i % 2], "user", text) for i, text in enumerate(texts)
    )
    return Session(f"session_{n}", DAY.replace(day=DAY.day + n), turns)


def conversation() -> Conversation:
    return Conversation(
        "c1",
        (
            session(1, ["I adopted a puppy named Rex.", "Lovely!", "He chews shoes.", "Ha."]),
            session(2, ["I started pottery classes.", "Fun!", "I made a bowl."]),
        ),
    )


def test_pack_takes_items_in_rank_order_skipping_ones_that_overflow() -> None:
    costs = [50, 400, 30, 600, 20]
    assert pack([1, 3, 0, 2, 4], costs, 500) == [1, 0, 2, 4]
    assert pack([3, 1], costs, 500) == [1]
    assert pack([0, 1], costs, 450) == [0, 1]  # exactly full stops the scan
    assert pack([3], costs, 100) == []


@pytest.mark.parametrize(
    ("length", "windows"),
    [
        (1, [[0]]),
        (4, [[0, 1, 2, 3]]),
        (5, [[0, 1, 2, 3], [2, 3, 4]]),
        (6, [[0, 1, 2, 3], [2, 3, 4, 5]]),
    ],
)
def test_rag_windows_overlap_and_cover_the_session(
    shared_embedder: Embedder, length: int, windows: list[list[int]]
) -> None:
    arm = RagArm(shared_embedder, default_counter(), window=4, stride=2)
    got = arm.windows(session(1, [f"t{i}" for i in range(length)]))
    assert [[int(t.id.split(":")[1]) - 1 for t in w] for w in got] == windows


def test_rag_retrieves_dated_windows_within_budget(shared_embedder: Embedder) -> None:
    arm = RagArm(shared_embedder, default_counter(), window=2, stride=1)
    arm.ingest(conversation())
    got = arm.retrieve("c1", "What is the name of the puppy?", 40)
    assert got.context.startswith("[9 May 2023] Caroline: I adopted a puppy named Rex.")
    assert got.tokens == default_counter().count(got.context) <= 40
    assert "D1:1" in got.turn_ids
    assert got.ranked_turns[0] == "D1:1"
    assert set(got.turn_ids) <= set(got.ranked_turns)


def test_bm25_retrieves_dated_turns_within_budget() -> None:
    counter = default_counter()
    arm = Bm25Arm(counter)
    arm.ingest(conversation())
    got = arm.retrieve("c1", "Which pottery classes did she start?", 1000)
    assert got.turn_ids == ["D2:1"]  # the only turn sharing a content word
    assert got.context == "[10 May 2023] Caroline: I started pottery classes."
    first = session(1, ["x"])
    assert turn_line(first, first.turns[0]) == "[9 May 2023] Caroline: x"
    tight = arm.retrieve("c1", "puppy shoes pottery bowl", 20)
    assert tight.ranked_turns[:2] == ["D1:3", "D2:3"]  # 13 tokens each
    assert (tight.turn_ids, tight.tokens) == (["D1:3"], 13)
    assert arm.retrieve("c1", "puppy shoes pottery bowl", 26).turn_ids == ["D1:3", "D2:3"]


def test_timed_embedder_accumulates_and_never_closes_the_shared_model() -> None:
    class Fake:
        model_name = "fake"
        dim = 3
        closed = False

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 3), dtype=np.float32)

        def close(self) -> None:
            self.closed = True

    inner = Fake()
    timed = TimedEmbedder(inner)  # type: ignore[arg-type]
    assert timed.embed(["a", "b"]).shape == (2, 3)
    timed.embed(["c"])
    assert (timed.texts, timed.calls) == (3, 2)
    assert timed.seconds > 0
    assert (timed.model_name, timed.dim) == ("fake", 3)
    timed.close()
    assert inner.closed is False
    TimedEmbedder(inner, close_inner=True).close()  # type: ignore[arg-type]
    assert inner.closed is True


def test_progress_writes_one_line_per_tenth_off_a_terminal() -> None:
    stream = io.StringIO()
    with Progress("questions", 20, stream=stream) as bar:
        for _ in range(20):
            bar.update()
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("questions [........................] 0/20")
    assert lines[-1].startswith("questions [########################] 20/20")
    assert len(lines) == 11
    quiet = io.StringIO()
    Progress("x", 5, stream=quiet, enabled=False).update(5)
    assert quiet.getvalue() == ""


def test_import_batches_keep_sessions_whole_and_order_within_the_request_limit() -> None:
    sizes = [300, 150, 100, 600]
    sessions = [[Message(f"s{n} m{i}", role="user") for i in range(k)] for n, k in enumerate(sizes)]
    batches = import_batches(sessions, limit=500)
    assert [len(b) for b in batches] == [450, 100, 500, 100]
    flat = [m.content for b in batches for m in b]
    assert flat == [m.content for s in sessions for m in s]  # every message once, in order


def test_nmafc_arm_maps_stored_turns_back_across_import_requests(
    shared_embedder: Embedder,
) -> None:
    # Three messages a request: the 7 turns go in as [4 split 3+1, 3], across sessions.
    arm = NmafcArm(shared_embedder, import_limit=3)
    try:
        arm.ingest(conversation())
        got = arm.retrieve("c1", "What is the name of the puppy?", 300)
        assert "D1:1" in got.turn_ids
        assert "Rex" in got.context
        pottery = arm.retrieve("c1", "What classes did Caroline start?", 300)
        assert "D2:1" in pottery.turn_ids
    finally:
        arm.close()

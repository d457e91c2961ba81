"""Bad input raises a typed error naming the fix, and leaves both stores exactly as they were."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.core.turns import Message
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import (
    EmptyMessages,
    InvalidInput,
    InvalidSnapshot,
    MemoryNotFound,
    NmafcError,
    UnknownTier,
    VectorDimensionMismatch,
)

from .helpers import say


def _fingerprint(engine: MemoryEngine, scope: Scope) -> tuple[object, ...]:
    stats = engine.stats(scope)
    return (
        stats.records,
        stats.invalidated,
        stats.turns,
        stats.events,
        stats.turn,
        engine.ctx.hot.store._table.version,
        sorted(engine.working_set(scope)),
    )


CASES: list[tuple[str, type[NmafcError], str, Callable[[MemoryEngine, Scope], object]]] = [
    ("empty messages", EmptyMessages, "at least one message", lambda e, s: e.remember(s, [])),
    (
        "blank message",
        EmptyMessages,
        "non-empty",
        lambda e, s: e.remember(s, [say("ok"), Message("  ")]),
    ),
    (
        "unknown tier",
        UnknownTier,
        "CoreAnchor, ActiveContext, EphemeralState",
        lambda e, s: e.ingest(s, [FactDraft("x", "x", tier="Forever")]),  # type: ignore[arg-type]
    ),
    (
        "wrong vector dimension",
        VectorDimensionMismatch,
        "let NMAFC embed",
        lambda e, s: e.ingest(s, [FactDraft("x", "x", vector=np.ones(12, np.float32))]),
    ),
    (
        "zero vector",
        InvalidInput,
        "non-zero vector",
        lambda e, s: e.ingest(s, [FactDraft("x", "x", vector=np.zeros(384, np.float32))]),
    ),
    ("unknown id", MemoryNotFound, "GET /v1/memories", lambda e, s: e.forget(s, "no-such-id")),
    (
        "unknown id edit",
        MemoryNotFound,
        "valid id",
        lambda e, s: e.update(s, "nope", tier="CoreAnchor"),
    ),
    ("empty query", InvalidInput, "non-empty `query`", lambda e, s: e.recall(s, "   ")),
    ("negative rollback", InvalidInput, "scope's past", lambda e, s: e.rollback(s, -1)),
    (
        "not a snapshot",
        InvalidSnapshot,
        "export_snapshot",
        lambda e, s: e.import_snapshot(s, Path(__file__)),
    ),
]


@pytest.mark.parametrize(("name", "error", "fix", "call"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_fails_cleanly(
    engine: MemoryEngine,
    scope: Scope,
    name: str,
    error: type[NmafcError],
    fix: str,
    call: Callable[[MemoryEngine, Scope], object],
) -> None:
    engine.remember(scope, [say("I'm allergic to shellfish.")])
    before = _fingerprint(engine, scope)
    with pytest.raises(error) as caught:
        call(engine, scope)
    assert fix in caught.value.fix, caught.value.fix
    assert str(caught.value).endswith(caught.value.fix)
    assert 400 <= caught.value.status < 500
    assert _fingerprint(engine, scope) == before


def test_a_failure_inside_the_transaction_rolls_everything_back(
    engine: MemoryEngine, scope: Scope
) -> None:
    engine.remember(scope, [say("first")])
    before = _fingerprint(engine, scope)

    def explode(session, row):  # type: ignore[no-untyped-def]
        session.turns.retract_after(scope, 0)
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        engine.ctx.write(scope, explode)
    assert _fingerprint(engine, scope) == before

"""Snapshots round-trip a scope and refuse another embedding model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nmafc.core.facts import FactDraft
from nmafc.core.scope import Scope
from nmafc.engine.engine import MemoryEngine
from nmafc.engine.recall import RecallOptions
from nmafc.errors import Conflict, InvalidSnapshot

from .helpers import assert_consistent, say


def test_export_then_import_into_a_new_scope_gives_the_same_memory(
    engine: MemoryEngine, scope: Scope, tmp_path: Path
) -> None:
    engine.remember(scope, [say("I adopted a puppy named Oscar."), say("Oscar loves the beach.")])
    old = engine.ingest(scope, [FactDraft("Caroline lives in Paris", "home")]).added[0]
    engine.ingest(scope, [FactDraft("Caroline lives in Berlin", "home2", overrides_entity="home")])
    path = tmp_path / "snapshot.json"
    counts = engine.export_snapshot(scope, path)
    assert counts == {"turns": 2, "facts": 4}

    copy = Scope(scope.agent_id, "restored")
    imported = engine.import_snapshot(copy, path)
    assert imported == {"turns": 2, "facts": 4, "valid": 3}
    original = sorted(r.content for r in engine.working_set(scope).values())
    restored = sorted(r.content for r in engine.working_set(copy).values())
    assert original == restored
    assert old.id not in engine.working_set(copy)  # ids are re-issued
    result = engine.recall(copy, "puppy", RecallOptions(reinforce=False))
    assert "Oscar" in result.context
    assert result.evidence_turn_ids
    assert_consistent(engine, copy)


def test_import_refuses_another_model_and_a_non_empty_scope(
    engine: MemoryEngine, scope: Scope, tmp_path: Path
) -> None:
    engine.remember(scope, [say("hello there")])
    path = tmp_path / "snapshot.json"
    engine.export_snapshot(scope, path)
    with pytest.raises(Conflict, match="purge"):
        engine.import_snapshot(scope, path)
    document = json.loads(path.read_text())
    document["embedding_model"] = "text-embedding-3-small"
    document["embedding_dim"] = 1536
    path.write_text(json.dumps(document))
    with pytest.raises(InvalidSnapshot, match="text-embedding-3-small"):
        engine.import_snapshot(Scope(scope.agent_id, "fresh"), path)


def test_import_refuses_turns_numbered_outside_the_snapshots_clock(
    engine: MemoryEngine, scope: Scope, tmp_path: Path
) -> None:
    engine.remember(scope, [say("hello there"), say("hi!", "assistant")])
    path = tmp_path / "snapshot.json"
    engine.export_snapshot(scope, path)
    document = json.loads(path.read_text())
    for clock, first in ((1.0, 1.0), (2.0, 0.0)):  # a turn past the clock; a turn 0
        edited = {**document, "turn": clock}
        edited["turns"] = [{**document["turns"][0], "turn": first}, *document["turns"][1:]]
        path.write_text(json.dumps(edited))
        with pytest.raises(InvalidSnapshot, match="outside 1"):
            engine.import_snapshot(Scope(scope.agent_id, f"fresh-{first:g}"), path)

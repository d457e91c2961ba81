"""Export a scope to a JSON snapshot, and import one into an empty scope."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from nmafc.core.events import EventKind
from nmafc.core.records import MemoryRecord, utcnow
from nmafc.core.scope import Scope
from nmafc.engine.changes import ChangeSet
from nmafc.engine.context import EngineContext
from nmafc.errors import Conflict, InvalidSnapshot
from nmafc.storage.cold import ColdSession, ScopeRow
from nmafc.storage.cold.turns_repo import NewTurn

FORMAT = "nmafc.snapshot"
VERSION = 1


class Snapshots:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def export(self, scope: Scope, path: Path) -> dict[str, int]:
        """Write every turn and fact version of ``scope`` (with embeddings) to ``path``."""
        with self.ctx.cold.read() as session:
            row = session.scopes.get(scope)
            turns = session.turns.page(scope, limit=10_000_000, include_retracted=True)
            versions, vectors = session.facts.all_versions(scope)
        document = {
            "format": FORMAT,
            "version": VERSION,
            "embedding_model": self.ctx.embedder.model_name,
            "embedding_dim": self.ctx.embedder.dim,
            "exported_at": utcnow().isoformat(),
            "scope": {"agent_id": scope.agent_id, "conversation_id": scope.conversation_id},
            "turn": row.turn if row else 0.0,
            "turns": [
                {
                    "id": t.id,
                    "turn": t.turn,
                    "role": t.role,
                    "speaker": t.speaker,
                    "content": t.content,
                    "occurred_at": t.occurred_at.isoformat(),
                    "extra": dict(t.extra),
                    "retracted": t.retracted,
                }
                for t in turns
            ],
            "facts": [
                {
                    **record.to_payload(),
                    "embedding": base64.b64encode(
                        np.asarray(vectors[i], dtype="<f4").tobytes()
                    ).decode(),
                }
                for i, record in enumerate(versions)
            ],
        }
        path = Path(path)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(document))
        tmp.replace(path)
        return {"turns": len(turns), "facts": len(versions)}

    def import_(self, scope: Scope, path: Path) -> dict[str, int]:
        """Load a snapshot into ``scope``, which must hold nothing yet; ids are re-issued."""
        document = _read(Path(path))
        model, dim = document.get("embedding_model"), document.get("embedding_dim")
        if model != self.ctx.embedder.model_name or dim != self.ctx.embedder.dim:
            raise InvalidSnapshot(
                f"The snapshot was written with {model} ({dim}-d); this store uses "
                f"{self.ctx.embedder.model_name} ({self.ctx.embedder.dim}-d).",
                fix="Import into a store that uses the snapshot's embedding model "
                "(NMAFC_EMBEDDING_MODEL), or re-export from such a store.",
            )
        try:
            turns = document["turns"]
            facts = [(MemoryRecord.from_payload(f), f["embedding"]) for f in document["facts"]]
            clock = float(document["turn"])
            numbers = [float(t["turn"]) for t in turns]
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidSnapshot(f"The snapshot is malformed: {exc!r}.") from exc
        # Turns are numbered from 1 and never past the clock; recall relies on a scope with
        # turns having a clock above 0.
        if numbers and (min(numbers) < 1 or max(numbers) > clock):
            raise InvalidSnapshot(
                f"The snapshot's turns are numbered {min(numbers):g}..{max(numbers):g}, "
                f"outside 1..{clock:g} (its clock).",
            )

        def build(session: ColdSession, row: ScopeRow) -> tuple[ChangeSet, dict[str, int]]:
            if row.seq > 0 or session.turns.count(scope, include_retracted=True) > 0:
                raise Conflict(
                    f"{scope} already holds memories.",
                    fix="Import into a new conversation id, or purge this one first.",
                )
            stored = session.turns.insert(
                row,
                [
                    NewTurn(
                        turn=float(t["turn"]),
                        role=t["role"],
                        speaker=t["speaker"],
                        content=t["content"],
                        occurred_at=datetime.fromisoformat(t["occurred_at"]),
                        extra=t.get("extra") or None,
                    )
                    for t in turns
                ],
            )
            turn_ids = {int(t["id"]): s.id for t, s in zip(turns, stored, strict=True)}
            retracted_after = min(
                (float(t["turn"]) for t in turns if t.get("retracted")), default=None
            )
            if retracted_after is not None:
                session.turns.retract_after(scope, retracted_after - 1)
            record_ids: dict[str, str] = {}
            changes = ChangeSet(turn=clock)
            current: dict[str, MemoryRecord] = {}
            for record, encoded in facts:
                new_id = record_ids.setdefault(record.id, str(uuid.uuid4()))
                moved = record.evolve(
                    id=new_id,
                    agent_id=scope.agent_id,
                    conversation_id=scope.conversation_id,
                    source_turn_ids=tuple(
                        turn_ids[t] for t in record.source_turn_ids if t in turn_ids
                    ),
                )
                vector = np.frombuffer(base64.b64decode(encoded), dtype="<f4").astype(np.float32)
                if vector.shape != (self.ctx.embedder.dim,):
                    raise InvalidSnapshot(f"Fact {record.id} has a {vector.shape[0]}-d vector.")
                changes.add_version(moved, vector)
                if new_id not in current or current[new_id].version < moved.version:
                    current[new_id] = moved
            valid = [r for r in current.values() if r.is_valid]
            changes.log(
                EventKind.IMPORT, clock, *valid, detail={"turns": len(stored), "facts": len(facts)}
            )
            return changes, {"turns": len(stored), "facts": len(facts), "valid": len(valid)}

        return self.ctx.write(scope, build)


def _read(path: Path) -> dict[str, Any]:
    try:
        document = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InvalidSnapshot(f"Cannot read snapshot {path}: {exc}.") from exc
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InvalidSnapshot(f"{path} is not an NMAFC snapshot.")
    if document.get("version") != VERSION:
        raise InvalidSnapshot(f"Snapshot version {document.get('version')} is not supported.")
    return document

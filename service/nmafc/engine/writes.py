"""Operations that add or change memories: remember, ingest, edit, forget, reinforce."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from nmafc import deadline
from nmafc.core.decay import with_expiry
from nmafc.core.entities import slugify
from nmafc.core.events import EventKind
from nmafc.core.facts import FactDraft
from nmafc.core.lifecycle import InvalidReason, invalidate
from nmafc.core.records import MemoryRecord, utcnow
from nmafc.core.reinforcement import strengthen
from nmafc.core.scope import Scope
from nmafc.core.tiers import parse_tier
from nmafc.core.turns import Message, Turn, dated, validate_messages
from nmafc.embedding.base import Vectors
from nmafc.engine.changes import ChangeSet
from nmafc.engine.context import EngineContext
from nmafc.errors import (
    InternalError,
    InvalidInput,
    MemoryNotFound,
    VectorDimensionMismatch,
    VersionConflict,
)
from nmafc.storage.cold import ColdSession, ScopeRow
from nmafc.storage.cold.turns_repo import NewTurn


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write stored: the new turns and records, and the records it invalidated."""

    turn: float
    turns: list[Turn] = field(default_factory=list)
    added: list[MemoryRecord] = field(default_factory=list)
    invalidated: list[MemoryRecord] = field(default_factory=list)


class Writes:
    def __init__(self, ctx: EngineContext) -> None:
        self.ctx = ctx

    def remember(self, scope: Scope, messages: Sequence[Message]) -> WriteResult:
        """Store each message as a turn, extract its facts and apply them."""
        result = self._remember(scope, messages, None)
        if result is None:  # only a queued remember can find nothing to do
            raise InternalError("remember wrote nothing.")
        return result

    def remember_queued(
        self, scope: Scope, item_id: int, messages: Sequence[Message]
    ) -> WriteResult | None:
        """Remember a queued exchange and claim its queue item in the same transaction.

        If the item was already remembered nothing is written and None is returned, so a
        retried or concurrent drain never applies an exchange twice.
        """
        return self._remember(scope, messages, item_id)

    def _remember(
        self, scope: Scope, messages: Sequence[Message], queued: int | None
    ) -> WriteResult | None:
        validate_messages(list(messages))
        received = utcnow()
        # Before extraction: "yesterday" in an undated reply resolves against its dated call.
        messages = dated(messages, received)
        drafts = self.ctx.extractor.extract(messages)
        deadline.check("after extracting facts")
        vectors = self._vectors_for(drafts)

        def build(session: ColdSession, row: ScopeRow) -> tuple[ChangeSet, WriteResult | None]:
            if queued is not None and not session.pending.claim(scope, queued):
                return ChangeSet(), None
            changes = ChangeSet()
            new_turns = [
                NewTurn(
                    turn=row.turn + index + 1,
                    role=m.role,
                    speaker=m.speaker_name,
                    content=m.content,
                    occurred_at=m.occurred_at or received,
                    extra={"captions": list(m.captions)} if m.captions else None,
                )
                for index, m in enumerate(messages)
            ]
            stored_turns = session.turns.insert(row, new_turns)
            changes.turn = row.turn + len(messages)
            changes.log(
                EventKind.TURN,
                changes.turn,
                detail={
                    "turn_ids": [t.id for t in stored_turns],
                    "from_turn": row.turn + 1,
                    "to_turn": changes.turn,
                    "facts": len(drafts),
                    **({"queue_id": queued} if queued is not None else {}),
                    **_fallback(drafts),
                },
            )
            added, invalidated = self._apply_drafts(
                session,
                row,
                changes,
                drafts,
                vectors,
                stored_turns,
                min_cosine=self.ctx.settings.extraction.override_min_cosine,
            )
            return changes, WriteResult(changes.turn, stored_turns, added, invalidated)

        return self.ctx.write(scope, build)

    def ingest(self, scope: Scope, drafts: Sequence[FactDraft]) -> WriteResult:
        """Store explicit facts (no turns); they are valid from the scope's current turn."""
        if not drafts:
            raise InvalidInput("The fact list is empty.", fix="Send at least one fact.")
        for index, draft in enumerate(drafts):
            if not draft.content.strip():
                raise InvalidInput(f"Fact {index} has empty content.", fix="Set `content`.")
        vectors = self._vectors_for(drafts)

        def build(session: ColdSession, row: ScopeRow) -> tuple[ChangeSet, WriteResult]:
            changes = ChangeSet()
            added, invalidated = self._apply_drafts(session, row, changes, drafts, vectors, [])
            return changes, WriteResult(row.turn, [], added, invalidated)

        return self.ctx.write(scope, build)

    def _vectors_for(self, drafts: Sequence[FactDraft]) -> Vectors:
        """Embed drafts in one batch; caller-supplied vectors are checked, not re-embedded."""
        dim = self.ctx.embedder.dim
        out = np.zeros((len(drafts), dim), dtype=np.float32)
        to_embed = [i for i, d in enumerate(drafts) if d.vector is None]
        for i, draft in enumerate(drafts):
            if draft.vector is None:
                continue
            vector = np.asarray(draft.vector, dtype=np.float32).reshape(-1)
            if vector.shape != (dim,):
                raise VectorDimensionMismatch(
                    f"Fact {i} has a {vector.shape[0]}-d vector; this store is {dim}-d."
                )
            norm = float(np.linalg.norm(vector))
            if not np.isfinite(norm) or norm == 0.0:
                raise InvalidInput(
                    f"Fact {i} has a zero or non-finite vector.", fix="Send a non-zero vector."
                )
            out[i] = vector / norm
        if to_embed:
            # The same text is embedded once: a long import repeats lines (a recurring
            # greeting, a pasted list) and each copy would cost a model run for one vector.
            texts = [_embedding_text(drafts[i]) for i in to_embed]
            unique = list(dict.fromkeys(texts))
            vectors = self.ctx.embedder.embed(unique)
            row = {text: n for n, text in enumerate(unique)}
            out[to_embed] = vectors[[row[text] for text in texts]]
        return out

    def _apply_drafts(
        self,
        session: ColdSession,
        row: ScopeRow,
        changes: ChangeSet,
        drafts: Sequence[FactDraft],
        vectors: Vectors,
        turns: Sequence[Turn],
        *,
        min_cosine: float | None = None,
    ) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
        """Add the drafts as records; each override closes the matching live records.

        With ``min_cosine`` (extracted facts) an old record is only overridden when it is
        also about the same thing by meaning: a slot pattern alone ("I live in …") can fire
        on figures of speech, the embedding confirms the two facts compete.
        """
        added: list[MemoryRecord] = []
        invalidated: list[MemoryRecord] = []
        overridden = {d.overrides_entity for d in drafts if d.overrides_entity}
        live = {r.id: r for r in session.facts.valid_by_entity(row.scope, overridden)}
        known = {
            rid: v
            for (rid, _), v in session.facts.vectors(
                row.scope, [(r.id, r.version) for r in live.values()]
            ).items()
        }
        for draft, vector in zip(drafts, vectors, strict=True):
            turn_row = turns[draft.message_index] if draft.message_index is not None else None
            turn = turn_row.turn if turn_row else row.turn
            when = turn_row.occurred_at if turn_row else utcnow()
            if draft.overrides_entity:
                competing = [
                    r
                    for r in live.values()
                    if r.entity == draft.overrides_entity
                    and (min_cosine is None or float(known[r.id] @ vector) >= min_cosine)
                ]
                for old in competing:
                    closed = invalidate(old, turn, when, InvalidReason.OVERRIDE)
                    del live[old.id]
                    changes.update(closed)
                    changes.log(EventKind.INVALIDATE, turn, closed, detail={"reason": "override"})
                    invalidated.append(closed)
            sources = tuple(draft.source_turn_ids) + ((turn_row.id,) if turn_row else ())
            record = self._new_record(row, draft, turn, when, sources)
            changes.add_version(record, vector)
            changes.log(EventKind.ADD, turn, record)
            live[record.id] = record
            known[record.id] = vector
            added.append(record)
        return added, invalidated

    def _new_record(
        self,
        row: ScopeRow,
        draft: FactDraft,
        turn: float,
        when: datetime,
        sources: tuple[int, ...],
    ) -> MemoryRecord:
        record = MemoryRecord(
            id=str(uuid.uuid4()),
            agent_id=row.scope.agent_id,
            conversation_id=row.scope.conversation_id,
            entity=slugify(draft.entity),
            content=draft.content.strip(),
            tier=parse_tier(draft.tier),
            weight0=1.0,
            anchor_turn=self.ctx.clock(turn),
            k=0,
            importance=min(1.0, max(0.0, float(draft.importance))),
            related_entities=tuple(dict.fromkeys(slugify(e) for e in draft.related_entities)),
            source_turn_ids=tuple(dict.fromkeys(sources)),
            valid_at=turn,
            valid_at_time=when,
        )
        return with_expiry(record, self.ctx.decay)

    def update(
        self,
        scope: Scope,
        record_id: str,
        *,
        content: str | None = None,
        tier: str | None = None,
        expected_version: int | None = None,
    ) -> MemoryRecord:
        """Edit a record: new content makes a new version; a tier change is in place.

        With ``expected_version`` the edit applies only if the record is still at that
        version (optimistic concurrency), else :class:`VersionConflict`.
        """
        if content is None and tier is None:
            raise InvalidInput("Nothing to change.", fix="Send `content` and/or `tier`.")
        if content is not None and not content.strip():
            raise InvalidInput("`content` is empty.", fix="Send non-empty `content`.")
        new_tier = parse_tier(tier) if tier is not None else None
        vector = self.ctx.embedder.embed([content])[0] if content is not None else None

        def build(session: ColdSession, row: ScopeRow) -> tuple[ChangeSet, MemoryRecord]:
            current = self._valid_record(session, scope, record_id)
            if expected_version is not None and current.version != expected_version:
                raise VersionConflict(
                    f"Memory {record_id!r} is at version {current.version}, not {expected_version}."
                )
            changes = ChangeSet()
            updated = current.evolve(tier=new_tier or current.tier)
            if content is not None and vector is not None:
                # The new wording is valid from the edit on: a point-in-time query before it
                # sees the old version, whose validity ends exactly where this one begins.
                edited_at = utcnow()
                closed = invalidate(current, row.turn, edited_at, InvalidReason.SUPERSEDED)
                changes.update(closed)
                updated = updated.evolve(
                    content=content.strip(),
                    version=current.version + 1,
                    valid_at=row.turn,
                    valid_at_time=edited_at,
                )
                updated = with_expiry(updated, self.ctx.decay)
                changes.add_version(updated, vector)
            else:
                updated = with_expiry(updated, self.ctx.decay)
                changes.update(updated)
            # A tier change rewrites the record in place: the event keeps the tier it had.
            changes.log(
                EventKind.UPDATE,
                row.turn,
                updated,
                detail={
                    "content_changed": content is not None,
                    "tier": updated.tier.value,
                    "previous_tier": current.tier.value,
                },
            )
            return changes, updated

        return self.ctx.write(scope, build)

    def forget(self, scope: Scope, record_id: str) -> MemoryRecord:
        """Stop recalling one record; history keeps it (purge is what erases content).

        Its source turns are hidden from search too when no other valid fact stands on
        them, so a forgotten fact does not come back verbatim in the sources.
        """

        def build(session: ColdSession, row: ScopeRow) -> tuple[ChangeSet, MemoryRecord]:
            current = self._valid_record(session, scope, record_id)
            closed = invalidate(current, row.turn, utcnow(), InvalidReason.DELETED)
            working = self.ctx.hot.working_set(row)
            with working.lock:
                still_used = working.records.source_turns(excluding=record_id)
            hidden = [t for t in current.source_turn_ids if t not in still_used]
            session.turns.retract_ids(scope, hidden)
            changes = ChangeSet()
            changes.update(closed)
            changes.log(EventKind.DELETE, row.turn, closed, detail={"hidden_turn_ids": hidden})
            return changes, closed

        return self.ctx.write(scope, build)

    def reinforce(self, scope: Scope, record_ids: Sequence[str]) -> list[MemoryRecord]:
        """Long-term potentiation for used records, in one batched write.

        Each is strengthened at most once per ``reinforcement.min_spacing`` of the clock
        (see :mod:`nmafc.core.reinforcement`); returns the records that were.
        """
        if not record_ids:
            return []
        rule = self.ctx.settings.reinforcement.rule()

        def build(session: ColdSession, row: ScopeRow) -> tuple[ChangeSet, list[MemoryRecord]]:
            now = self.ctx.clock(row.turn)
            current = session.facts.current(scope, record_ids)
            strengthened = [
                record
                for rid in dict.fromkeys(record_ids)
                if rid in current
                and current[rid].is_valid
                and (record := strengthen(current[rid], now, self.ctx.decay, rule)) is not None
            ]
            changes = ChangeSet()
            if strengthened:
                changes.update(*strengthened)
                changes.log(
                    EventKind.REINFORCE,
                    row.turn,
                    *strengthened,
                    detail={"count": len(strengthened)},
                )
            return changes, strengthened

        return self.ctx.write_logged(scope, build, defer_hot=True)[0]

    @staticmethod
    def _valid_record(session: ColdSession, scope: Scope, record_id: str) -> MemoryRecord:
        record = session.facts.current(scope, [record_id]).get(record_id)
        if record is None or not record.is_valid:
            raise MemoryNotFound(f"No valid memory {record_id!r} in {scope}.")
        return record


def _embedding_text(draft: FactDraft) -> str:
    """The fact as embedded: with the question it answers, when it is a reply."""
    return f"{draft.context} {draft.content}" if draft.context else draft.content


def _fallback(drafts: Sequence[FactDraft]) -> dict[str, str]:
    """``extraction_fallback`` for the turn event when the rules stood in for the LLM."""
    reasons = [d.fallback for d in drafts if d.fallback]
    return {"extraction_fallback": reasons[0]} if reasons else {}

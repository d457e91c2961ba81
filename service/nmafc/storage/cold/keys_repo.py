"""The ``api_keys`` table: hashed API keys. Secrets are never stored, only their HMAC."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection

from nmafc.core.records import utcnow
from nmafc.core.scope import KeyOwner
from nmafc.storage.cold.filters import where_owner
from nmafc.storage.cold.schema import api_keys, meta

PEPPER_KEY = "api_key_pepper"


@dataclass(frozen=True, slots=True)
class ApiKeyRow:
    """A stored key as listings show it: never the secret, never the hash."""

    id: int
    prefix: str
    agent_id: str | None
    is_admin: bool
    name: str
    created_at: datetime
    revoked_at: datetime | None


_COLUMNS = (
    api_keys.c.id,
    api_keys.c.prefix,
    api_keys.c.agent_id,
    api_keys.c.is_admin,
    api_keys.c.name,
    api_keys.c.created_at,
    api_keys.c.revoked_at,
)


def _row(r: Any) -> ApiKeyRow:
    return ApiKeyRow(
        id=int(r.id),
        prefix=r.prefix,
        agent_id=r.agent_id,
        is_admin=bool(r.is_admin),
        name=r.name,
        created_at=r.created_at,
        revoked_at=r.revoked_at,
    )


class KeysRepo:
    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def insert(
        self, *, key_hash: str, prefix: str, agent_id: str | None, is_admin: bool, name: str
    ) -> ApiKeyRow:
        """Store a new key's hash; ``agent_id`` is None exactly for admin keys."""
        key_id = self._conn.execute(
            api_keys.insert().returning(api_keys.c.id),
            {
                "key_hash": key_hash,
                "prefix": prefix,
                "agent_id": agent_id,
                "is_admin": is_admin,
                "name": name,
                "created_at": utcnow(),
            },
        ).scalar_one()
        row = self._conn.execute(select(*_COLUMNS).where(api_keys.c.id == key_id)).one()
        return _row(row)

    def active_by_hash(self, key_hash: str) -> ApiKeyRow | None:
        """The live key with this hash (authentication: the lookup is by the secret itself)."""
        row = self._conn.execute(
            select(*_COLUMNS).where(
                api_keys.c.key_hash == key_hash, api_keys.c.revoked_at.is_(None)
            )
        ).first()
        return None if row is None else _row(row)

    def any_created(self) -> bool:
        """Whether a key was ever stored, revoked ones included (``NMAFC_AUTH=auto``)."""
        return self._conn.execute(select(api_keys.c.id).limit(1)).first() is not None

    def owned(self, owner: KeyOwner, *, include_revoked: bool = False) -> list[ApiKeyRow]:
        """The owner's keys, oldest first."""
        query = select(*_COLUMNS).where(where_owner(api_keys, owner))
        if not include_revoked:
            query = query.where(api_keys.c.revoked_at.is_(None))
        return [_row(r) for r in self._conn.execute(query.order_by(api_keys.c.id))]

    def matching(self, owner: KeyOwner, ref: str) -> list[ApiKeyRow]:
        """The owner's live keys whose id or prefix is ``ref``."""
        condition = api_keys.c.prefix == ref
        if ref.isdigit():
            condition = or_(condition, api_keys.c.id == int(ref))
        rows = self._conn.execute(
            select(*_COLUMNS).where(
                where_owner(api_keys, owner), condition, api_keys.c.revoked_at.is_(None)
            )
        )
        return [_row(r) for r in rows]

    def revoke(self, owner: KeyOwner, key_id: int) -> None:
        """Mark one of the owner's keys revoked (rows are kept for the audit trail)."""
        self._conn.execute(
            update(api_keys)
            .where(where_owner(api_keys, owner), api_keys.c.id == key_id)
            .values(revoked_at=utcnow())
        )

    def pepper(self) -> str:
        """The deployment's stored pepper, created on first use."""
        query = select(meta.c.value).where(meta.c.key == PEPPER_KEY)
        stored = self._conn.execute(query).scalar()
        if stored is not None:
            return str(stored)
        insert = pg_insert(meta) if self._conn.dialect.name == "postgresql" else sqlite_insert(meta)
        # Replicas starting together may race here: the first insert wins, all read it back.
        self._conn.execute(
            insert.values(key=PEPPER_KEY, value=secrets.token_urlsafe(32)).on_conflict_do_nothing(
                index_elements=["key"]
            )
        )
        return str(self._conn.execute(query).scalar_one())

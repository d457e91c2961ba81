"""Looking for erased text where a store keeps its bytes: files, S3 objects, PG relations."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text


def phrase() -> str:
    """A token no test writes twice; it ends in a digit so no stemmer shortens it."""
    return f"zq{uuid.uuid4().hex}7"


def _needles(token: str) -> tuple[bytes, ...]:
    return (token.encode(), token.encode("utf-16-le"), token.encode("utf-16-be"))


def holds(data: bytes, token: str) -> bool:
    """Whether ``data`` contains ``token`` as UTF-8 or UTF-16."""
    return any(needle in data for needle in _needles(token))


def files_holding(root: Path, token: str) -> list[str]:
    """Every file under ``root`` whose bytes contain ``token``."""
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and holds(path.read_bytes(), token)
    )


def objects_holding(client: Any, bucket: str, prefix: str, token: str) -> tuple[int, list[str]]:
    """``(objects read, keys holding token)`` for every object under ``prefix``."""
    keys: list[str] = []
    paginator = client.get_paginator("list_objects_v2")
    for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
        keys += [item["Key"] for item in page.get("Contents", [])]
    hits = [k for k in keys if holds(client.get_object(Bucket=bucket, Key=k)["Body"].read(), token)]
    return len(keys), hits


def postgres_files_holding(admin_url: str, schema: str, token: str) -> tuple[int, list[str]]:
    """``(relation files read, relations holding token)`` for every table, index and TOAST
    relation of ``schema``, read from the server's data directory after a CHECKPOINT."""
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text("CHECKPOINT"))
            root = Path(conn.execute(text("SHOW data_directory")).scalar_one())
            rows = conn.execute(
                text(
                    "SELECT c.relname, pg_relation_filepath(c.oid) FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname IN (:s, 'pg_toast') AND c.relkind IN ('r', 'i', 't', 'm') "
                    "AND pg_relation_filepath(c.oid) IS NOT NULL "
                    "AND (n.nspname = :s OR c.oid IN (SELECT reltoastrelid FROM pg_class k "
                    "JOIN pg_namespace m ON m.oid = k.relnamespace WHERE m.nspname = :s) "
                    "OR c.oid IN (SELECT i.indexrelid FROM pg_index i JOIN pg_class k "
                    "ON k.oid = i.indrelid JOIN pg_namespace m ON m.oid = k.relnamespace "
                    "WHERE m.nspname = 'pg_toast' AND k.oid IN (SELECT reltoastrelid FROM "
                    "pg_class q JOIN pg_namespace p ON p.oid = q.relnamespace "
                    "WHERE p.nspname = :s)))"
                ),
                {"s": schema},
            ).all()
    finally:
        engine.dispose()
    read, hits = 0, []
    for name, relative in rows:
        # A relation over 1 GB continues in <file>.1, <file>.2, …
        for segment in sorted((root / relative).parent.glob(Path(relative).name + "*")):
            if segment.name.split(".")[0] != Path(relative).name or "_" in segment.name:
                continue
            read += 1
            if holds(segment.read_bytes(), token):
                hits.append(name)
    return read, sorted(set(hits))

"""Entity keys: stable slugs that name what a fact is about and what it links to."""

from __future__ import annotations

import re

_NON_WORD = re.compile(r"[^a-z0-9]+")
MAX_ENTITY_CHARS = 64


def slugify(text: str) -> str:
    """``"Caroline's support group"`` → ``"caroline_s_support_group"`` (ASCII, ≤ 64 chars)."""
    slug = _NON_WORD.sub("_", text.lower()).strip("_")
    return slug[:MAX_ENTITY_CHARS].rstrip("_") or "fact"

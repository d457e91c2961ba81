"""What a store did to make deleted rows unreadable on disk (a purge receipt's evidence)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Erasure:
    """The physical steps one store took after a delete.

    ``complete`` is true when every file the store tracks that held the deleted bytes was
    rewritten or removed (WAL segments, backups and snapshots kept by the operator are
    outside it); ``note`` names what may remain and the step that removes it.
    """

    steps: tuple[str, ...]
    complete: bool
    counts: dict[str, int] = field(default_factory=dict)
    note: str | None = None

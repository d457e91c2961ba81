"""The background services."""

from __future__ import annotations

from pydantic import BaseModel, Field


class MaintenanceSettings(BaseModel):
    """Background services: each has a switch and an interval."""

    pass_enabled: bool = Field(
        True, description="Run prune + consolidation for every scope that is due."
    )
    pass_interval_s: float = Field(
        30.0, gt=0, description="Seconds between walks over the scopes that are due."
    )
    scopes_per_run: int = Field(
        200, ge=1, description="Most scopes one walk maintains (the rest wait for the next)."
    )
    compaction_enabled: bool = Field(
        True, description="Compact the Hot store (merge fragments, prune old versions)."
    )
    compaction_interval_s: float = Field(
        3600.0, gt=0, description="Longest time between Hot compactions, however few writes."
    )
    compaction_check_s: float = Field(
        5.0, gt=0, description="Seconds between checks of whether Hot compaction is due."
    )
    compaction_max_fragments: int = Field(
        32,
        ge=2,
        description="Compact once the table has this many small fragments (each write adds "
        "one, and each slows later writes and scope loads), or twice as many commits.",
    )
    compaction_fragment_rows: int = Field(
        4096, ge=1024, description="Rows per fragment: bounds what one compaction rewrites."
    )
    version_retention_s: float = Field(
        10.0,
        ge=0,
        description="Superseded LanceDB versions live this long for readers still on them "
        "(a purge removes those holding purged rows at once).",
    )
    flush_enabled: bool = Field(
        True, description="Write deferred Hot changes (reinforcements) to LanceDB periodically."
    )
    flush_interval_s: float = Field(
        15.0, gt=0, description="Seconds between flushes of deferred Hot changes."
    )

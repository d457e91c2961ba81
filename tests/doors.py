"""One ``nmafc serve`` for every door's tests (MCP, Mem0, LangGraph): keys for each."""

from __future__ import annotations

from pathlib import Path

# key -> agent ("*": admin). Each door's tests use their own agents, so they never meet.
DOOR_KEYS = {
    "alice-key": "agent-a",
    "bob-key": "agent-b",
    "root-key": "*",
    "demo-secret": "support-bot",
    "lg-key": "graph-agent",
    "other-key": "other-agent",
}


def service_env(data_dir: Path) -> dict[str, str]:
    """A fresh data directory, no settings file, the keys above."""
    return {
        "NMAFC_DATA_DIR": str(data_dir),
        "NMAFC_CONFIG": "",
        "XDG_CONFIG_HOME": str(data_dir / "config"),
        "NMAFC_API_KEYS": ",".join(f"{k}:{a}" for k, a in DOOR_KEYS.items()),
    }

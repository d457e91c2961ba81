"""The Cold ROM: turns verbatim, every fact version, the append-only event log."""

from nmafc.storage.cold.store import ColdSession, ColdStore, ScopeRow

__all__ = ["ColdSession", "ColdStore", "ScopeRow"]

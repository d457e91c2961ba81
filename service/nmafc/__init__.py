"""NMAFC: memory for LLM agents that decays, strengthens with use and corrects itself.

The public surface::

    from nmafc import SyncMemory, Memory          # library API (blocking / asyncio)
    from nmafc import Settings, load_settings     # configuration
    from nmafc import Tier, MemoryRecord, Message # values
    from nmafc import NmafcError                  # base of every error NMAFC raises

The names are loaded on first use (PEP 562): ``import nmafc`` or ``import nmafc.client``
costs no store, framework or model import, and only ``Memory``/``SyncMemory`` bring the
engine in.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nmafc.core.records import MemoryRecord as MemoryRecord
    from nmafc.core.scope import AgentScope as AgentScope
    from nmafc.core.scope import Scope as Scope
    from nmafc.core.tiers import Tier as Tier
    from nmafc.core.turns import Message as Message
    from nmafc.errors import NmafcError as NmafcError
    from nmafc.memory import Memory as Memory
    from nmafc.memory import SyncMemory as SyncMemory
    from nmafc.settings import Settings as Settings
    from nmafc.settings import load_settings as load_settings

__version__ = "0.1.0"

_PUBLIC: dict[str, str] = {
    "AgentScope": "nmafc.core.scope",
    "Memory": "nmafc.memory",
    "MemoryRecord": "nmafc.core.records",
    "Message": "nmafc.core.turns",
    "NmafcError": "nmafc.errors",
    "Scope": "nmafc.core.scope",
    "Settings": "nmafc.settings",
    "SyncMemory": "nmafc.memory",
    "Tier": "nmafc.core.tiers",
    "load_settings": "nmafc.settings",
}

__all__ = [*sorted(_PUBLIC), "__version__"]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first access, then cache the name here."""
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'nmafc' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})

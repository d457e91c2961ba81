"""NMAFC: memory for LLM agents that decays, strengthens with use and corrects itself.

The public surface::

    from nmafc import SyncMemory, Memory          # library API (blocking / asyncio)
    from nmafc import Settings, load_settings     # configuration
    from nmafc import Tier, MemoryRecord, Message # values
    from nmafc import NmafcError                  # base of every error NMAFC raises
"""

from nmafc.core.records import MemoryRecord
from nmafc.core.scope import AgentScope, Scope
from nmafc.core.tiers import Tier
from nmafc.core.turns import Message
from nmafc.errors import NmafcError
from nmafc.memory import Memory, SyncMemory
from nmafc.settings import Settings, load_settings

__version__ = "0.1.0"

__all__ = [
    "AgentScope",
    "Memory",
    "MemoryRecord",
    "Message",
    "NmafcError",
    "Scope",
    "Settings",
    "SyncMemory",
    "Tier",
    "__version__",
    "load_settings",
]

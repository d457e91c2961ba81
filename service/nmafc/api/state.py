"""The typed lifespan state: everything a request may reach, created once per app."""

from __future__ import annotations

from dataclasses import dataclass

from anyio import CapacityLimiter

from nmafc.api.metrics import Metrics
from nmafc.auth import Authenticator
from nmafc.engine.engine import MemoryEngine
from nmafc.live.hub import LiveHub
from nmafc.providers.base import ChatProvider
from nmafc.services.base import Service
from nmafc.settings import Settings


@dataclass(frozen=True, slots=True)
class AppState:
    settings: Settings
    engine: MemoryEngine
    auth: Authenticator
    hub: LiveHub
    metrics: Metrics
    services: tuple[Service, ...]
    recall_slots: CapacityLimiter
    provider: ChatProvider | None = None  # the upstream LLM, when one is configured

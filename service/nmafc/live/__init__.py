"""Live events: the log tail reads every commit; the hub fans them out to WebSocket clients."""

from nmafc.live.hub import LiveFilter, LiveHub, Subscription
from nmafc.live.tail import ColdEventLog, LogTail

__all__ = ["ColdEventLog", "LiveFilter", "LiveHub", "LogTail", "Subscription"]

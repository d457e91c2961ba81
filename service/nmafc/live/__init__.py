"""Live events: the in-process hub that fans committed events out to WebSocket clients."""

from nmafc.live.hub import LiveFilter, LiveHub, Subscription

__all__ = ["LiveFilter", "LiveHub", "Subscription"]

"""A Mem0-compatible REST surface, so code written for Mem0's SDK runs against NMAFC."""

from nmafc.api.mem0.routes import router

__all__ = ["router"]

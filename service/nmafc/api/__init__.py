"""The HTTP service: a thin FastAPI layer over :class:`~nmafc.engine.engine.MemoryEngine`.

Routes parse, authorise, call one engine method in a worker thread, and serialise.
"""

from nmafc.api.app import create_app

__all__ = ["create_app"]

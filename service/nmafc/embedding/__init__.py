"""Embedders turn text into unit-length vectors; the default runs offline from bundled weights."""

from nmafc.embedding.base import Embedder
from nmafc.embedding.factory import create_embedder

__all__ = ["Embedder", "create_embedder"]

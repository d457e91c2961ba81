"""Turning messages into facts without a model call."""

from nmafc.core.extraction.base import Extractor
from nmafc.core.extraction.verbatim import VerbatimExtractor

__all__ = ["Extractor", "VerbatimExtractor"]

"""Extractors that call a model (they do I/O, so they live outside ``nmafc.core``)."""

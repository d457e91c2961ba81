"""Retrieval benchmarks (LoCoMo, LongMemEval): NMAFC against RAG, BM25 and session baselines."""

from nmafc.evaluation.runner import run_locomo, run_longmemeval

__all__ = ["run_locomo", "run_longmemeval"]

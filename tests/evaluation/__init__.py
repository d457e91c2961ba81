"""Tests of the benchmark harness (nmafc.evaluation)."""

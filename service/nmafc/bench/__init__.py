"""Benchmarks runnable from an installed package (`nmafc bench …`, `nmafc eval …`)."""

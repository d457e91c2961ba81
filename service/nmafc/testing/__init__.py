"""Real local servers for tests, smoke runs and benchmarks (never used by the service)."""

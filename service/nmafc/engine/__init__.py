"""The memory engine: orchestrates extraction, the stores and the pure core per operation."""

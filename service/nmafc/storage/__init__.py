"""The only package that touches the stores. Every call takes a scope and filters by it."""

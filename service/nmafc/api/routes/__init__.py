"""Route modules, one per resource; each route has a one-line docstring."""

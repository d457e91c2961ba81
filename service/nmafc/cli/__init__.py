"""The `nmafc` command line."""

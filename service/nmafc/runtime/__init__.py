"""Process tuning that only ``nmafc serve`` switches on; the library never re-tunes its host."""

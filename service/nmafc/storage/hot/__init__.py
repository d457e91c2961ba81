"""The Hot store: the LanceDB table of every scope's live facts (its RAM index: ``nmafc.index``)."""

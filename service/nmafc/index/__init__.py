"""The RAM retrieval index: a scope's working set and the cache of them.

A working set holds a scope's live facts for search in RAM: half-precision vectors
(``half``) with an int8 copy scanned first (``int8_scan``, ``int8_blocks``), BM25 postings
ranked as the Cold ROM's FTS5 ranks them (``keyword_index``), the entity graph, an exact
top-k (``top_k``). It is a cache derived from the stores (``nmafc.storage``), never a
store itself: the engine loads and refreshes it from there.
"""

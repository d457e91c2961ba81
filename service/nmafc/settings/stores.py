"""Where memory is kept: the Hot store (LanceDB) and the Cold ROM (SQLite or PostgreSQL)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


class HotSettings(BaseModel):
    """The Hot store: LanceDB in a local directory or on S3."""

    uri: str | None = Field(
        None,
        description="LanceDB location: a directory or s3://bucket/prefix. Default: <data_dir>/hot.",
    )
    table: str = Field("memories", description="LanceDB table holding every scope's records.")
    s3_endpoint: str | None = Field(
        None, description="S3-compatible endpoint URL, e.g. http://127.0.0.1:8333."
    )
    s3_region: str = Field("us-east-1", description="S3 region.")
    s3_access_key_id: SecretStr | None = Field(None, description="S3 access key id.")
    s3_secret_access_key: SecretStr | None = Field(None, description="S3 secret access key.")
    s3_allow_http: bool = Field(
        False, description="Allow a plain-http S3 endpoint (needed for loopback test servers)."
    )
    s3_max_retries: int = Field(
        3,
        ge=0,
        description="Retries of one S3 request before the Hot write or read fails (the Cold "
        "ROM stays the source of truth; Hot catches up from the log when S3 answers again).",
    )
    s3_retry_timeout_s: int = Field(
        10,
        ge=1,
        description="Longest time one S3 request is retried; keeps a request from hanging "
        "for minutes while the object store is down.",
    )
    s3_connect_timeout_s: int = Field(5, ge=1, description="S3 connect timeout.")
    s3_call_timeout_s: float = Field(
        8.0,
        gt=0,
        description="Deadline of one Hot store call on S3. A call that misses it (S3 down) "
        "pauses Hot calls for s3_cooldown_s: writes stay acknowledged by the Cold ROM and "
        "reach Hot from the log later; reads are served from RAM or the Cold ROM.",
    )
    s3_cooldown_s: float = Field(
        5.0, gt=0, description="How long Hot calls pause after an S3 failure before a retry."
    )
    lance_index_cache_mb: int = Field(
        32, ge=1, description="LanceDB index-page cache per process (raise it for S3)."
    )
    lance_metadata_cache_mb: int = Field(
        32, ge=1, description="LanceDB manifest and file-metadata cache per process."
    )
    read_consistency_s: float = Field(
        1.0,
        ge=0.0,
        description="How long this process may read the Hot table without looking for "
        "versions other processes committed (replicas, `serve --workers`); 0 looks on "
        "every read. Searches that LanceDB answers (agent-wide, cache off, a first search "
        "of a large scope) see another replica's writes within this long.",
    )
    ann_min_rows: int = Field(
        200_000,
        ge=1,
        description="Rows (every scope's, markers included) the LanceDB table must hold "
        "before the compaction pass builds an ANN vector index on it; below, searches of "
        "scopes not in RAM scan their rows exactly. The index is refreshed by every later "
        "compaction.",
    )
    ann_index_type: Literal["IVF_SQ", "IVF_HNSW_SQ", "IVF_PQ"] = Field(
        "IVF_SQ",
        description="Kind of the vector index: IVF_SQ (int8 codes; measured to train in "
        "~1 s per 50,000 rows), IVF_HNSW_SQ or IVF_PQ (far slower to train here).",
    )
    ann_min_share: float = Field(
        0.3,
        ge=0,
        le=1,
        description="A LanceDB search takes the vector index only for a reach (a "
        "conversation, or an agent's conversations) holding at least this share of the "
        "table's rows; smaller reaches read their own rows exactly through the tenant "
        "indexes, which costs less than probing partitions shared with every tenant.",
    )
    ann_nprobes: int = Field(
        20,
        ge=1,
        description="IVF partitions a LanceDB search probes at least (more while a narrow "
        "tenant filter has found fewer rows than asked for).",
    )
    ann_refine_factor: int = Field(
        4,
        ge=1,
        description="A LanceDB search re-ranks this many times its limit of index "
        "candidates on their float32 vectors.",
    )
    max_lag_events: int = Field(
        200,
        ge=0,
        description="Reinforcement events a scope's LanceDB rows may lag behind the log "
        "(reads are served from RAM meanwhile); 0 writes every recall through.",
    )
    preload_scopes: int = Field(
        1000,
        ge=0,
        description="At start-up, load the working sets of up to this many scopes into RAM "
        "in the background, most recently written first and up to half of cache_max_mb, so "
        "that their first searches after a restart or deploy are as fast as the rest. 0: "
        "each scope is loaded by its first search.",
    )
    cache_max_mb: int = Field(
        1024,
        ge=0,
        description="RAM for per-scope working-set caches (vectors, metadata, keyword "
        "postings); 0 disables the cache: every search goes to the stores (vectors to LanceDB, "
        "keywords to the Cold ROM), nothing is loaded, and the entity-graph list is left out.",
    )
    cache_inline_load_max_records: int = Field(
        2000,
        ge=0,
        description="A search of one conversation whose working set RAM does not hold "
        "loads it first, and waits, when the conversation has at most this many valid "
        "facts (≈ 0.2 s at 2,000 here); a larger one is searched in the stores (LanceDB "
        "and the Cold ROM, as with the cache off) at once while its working set loads in "
        "a background thread for the searches after it. 0: every load runs in the "
        "background.",
    )
    blas_threads: int | None = Field(
        None,
        ge=0,
        description="Threads NumPy's BLAS may use for working-set scans (process-wide). "
        "Unset: 1 in `nmafc serve` (OpenBLAS helper threads busy-wait between calls, burning "
        "a core for a few ms saved per scan), the host's own setting in a process that "
        "embeds the library; 0 keeps the BLAS library's default (one per core).",
    )
    gc_freeze_every: int | None = Field(
        None,
        ge=0,
        description="After every this many records loaded into working sets, move the "
        "process's objects out of Python's full garbage collections (gc.freeze, process-wide):"
        " at 10^5 records a full collection otherwise stalls every request for ~0.15 s "
        "several times a minute. Objects alive at that moment that later become reference "
        "cycles are never freed, hence not at every load. Unset: 10,000 in `nmafc serve`, "
        "never in a process that embeds the library; 0: never.",
    )
    int8_scan_min_rows: int = Field(
        8192,
        ge=0,
        description="Working sets of at least this many records are scanned through an "
        "int8 copy of their vectors (a quarter of the bytes to read), then re-ranked in "
        "float32 with a rounding bound that certifies the top-k equals the full scan's "
        "(near ties re-rank more rows). Costs ~1.4 bytes of RAM per dimension per record "
        "(the integer kernel's packed codes). 0: always the full scan.",
    )
    recall_batch_max: int = Field(
        16,
        ge=1,
        description="Most concurrent recalls that share one query-embedding run and one "
        "working-set scan. Recalls that arrive while a batch runs join the next one; an idle "
        "service waits for nothing. 1: every recall embeds and scans alone.",
    )


class ColdSettings(BaseModel):
    """The Cold ROM: SQLite file or PostgreSQL."""

    uri: str | None = Field(
        None,
        description="sqlite:///path or postgresql://user@host/db. Default: <data_dir>/cold.db.",
    )
    sqlite_synchronous: Literal["FULL", "NORMAL"] = Field(
        "FULL",
        description="SQLite fsync policy. FULL survives power loss; NORMAL survives process "
        "crashes only, and is faster.",
    )
    pool_size: int = Field(8, ge=1, description="Connection pool size (PostgreSQL).")
    connect_timeout_s: float = Field(5.0, gt=0, description="Database connect timeout.")
    vector_search: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Semantic search of archived facts inside the Cold ROM (PostgreSQL with "
        "pgvector). auto: on where the extension exists, else a RAM index per replica; on: "
        "refuse to start without it; off: always the RAM index.",
    )

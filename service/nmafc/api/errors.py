"""One renderer for every error: ``application/problem+json`` with a ``fix`` and request id."""

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
from nmafc.api.schemas import Problem
from nmafc.errors import (
    MalformedRequest,
    MethodNotAllowed,
    NmafcError,
    ProviderError,
    ProviderNotConfigured,
    RequestValidationFailed,
    RouteNotFound,
    StoreNotWritable,
    StoreUnavailable,
    TooManyConnections,
    Unauthorized,
)

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
    headers = dict(headers or {})
    if isinstance(error, StoreUnavailable | StoreNotWritable | TooManyConnections):
        headers["Retry-After"] = str(retry_after_s)
    if isinstance(error, ProviderError) and error.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, round(error.retry_after_s)))
    if isinstance(error, Unauthorized):
        headers["WWW-Authenticate"] = 'Bearer realm="nmafc"'
    return JSONResponse(
        body.model_dump(mode="json", exclude_none=True),
        status_code=error.status,
        headers=headers,
        media_type=PROBLEM_JSON,
    )


def install_error_handlers(app: FastAPI, retry_after_s: int) -> None:
    """Render NMAFC errors, validation errors, routing errors and anything unexpected."""

    async def on_nmafc_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, NmafcError)
        quiet = StoreUnavailable | TooManyConnections | ProviderError | ProviderNotConfigured
        if exc.status >= 500 and not isinstance(exc, quiet):
            log.error("%s: %s", exc.code, exc.detail)
        return problem(exc, retry_after_s=retry_after_s)

    async def on_validation_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        details = [
            {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": e.get("type")}
            for e in exc.errors()
        ]
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"]) or "request"
        error = RequestValidationFailed(f"{where}: {first['msg']}")
        return problem(error, errors=details)

    async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        error: NmafcError
        if exc.status_code == 404:
            error = RouteNotFound("No route matches this path.")
        elif exc.status_code == 405:
            allow = ", ".join(_methods_at(app, request.url.path))
            error = MethodNotAllowed(f"This route accepts {allow}.")
            return problem(error, headers={"Allow": allow})
        else:
            error = MalformedRequest(str(exc.detail))
        return problem(error, headers=exc.headers)

    app.add_exception_handler(NmafcError, on_nmafc_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(HTTPException, on_http_error)


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


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries documenting problem+json answers for the given statuses."""
    descriptions = {
        400: "Malformed request",
        401: "Missing or unknown API key",
        404: "Unknown id, or another agent's data",
        405: "Method not allowed",
        409: "Conflict (e.g. a stale `expected_version`)",
        413: "Request body too large",
        422: "Invalid request",
        429: "The upstream LLM is rate limiting; retry after `Retry-After` seconds",
        500: "Internal error (a bug)",
        502: "The upstream LLM failed; `detail` carries its message",
        503: "A store is unreachable; retry after `Retry-After` seconds",
        504: "The upstream LLM timed out",
    }
    schema = {"$ref": "#/components/schemas/Problem"}
    return {
        status: {"description": descriptions[status], "content": {PROBLEM_JSON: {"schema": schema}}}
        for status in statuses
    }

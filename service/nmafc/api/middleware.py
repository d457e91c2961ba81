"""Per-request plumbing, as one ASGI middleware: request id, body limit, metrics, access log.

- The request id comes from a well-formed ``X-Request-ID`` header or is generated; it is
  echoed in the response header, stamped on every log record and put in problem bodies.
- Bodies over ``max_body_bytes`` get 413: at once when ``Content-Length`` says so,
  otherwise as soon as the streamed body crosses the limit. A body still arriving
  ``body_timeout_s`` after the request began gets 408 (a client trickling bytes holds
  no handler for longer than that).
- Requests are counted and timed by route *template* (``/v1/memories/{memory_id}``), so
  no id — of a tenant or of a record — ever becomes a metric label.
- Anything unexpected becomes a 500 carrying the request id (problem+json, or OpenAI's
  error shape on the chat routes).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nmafc.api.errors import error_response
from nmafc.api.logs import request_id_var
from nmafc.api.metrics import Metrics
from nmafc.errors import BodyTimeout, InternalError, NmafcError, PayloadTooLarge

log = logging.getLogger("nmafc.access")
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestContext:
    def __init__(
        self, app: ASGIApp, *, metrics: Metrics, max_body_bytes: int, body_timeout_s: float
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                request_id_var.set(uuid.uuid4().hex)
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        given = headers.get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _REQUEST_ID.match(given) else uuid.uuid4().hex
        request_id_var.set(request_id)
        started = time.perf_counter()
        state: dict[str, Any] = {
            "status": 500, "started": False, "too_large": False, "too_slow": False,
            "body_done": False,
        }  # fmt: skip

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                if state["too_large"] or state["too_slow"]:
                    return  # the app's answer to a truncated body is replaced by our 413
                state["status"] = message["status"]
                state["started"] = True
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            elif state["too_large"] or state["too_slow"]:
                return
            await send(message)

        received = 0
        body_due = started + self.body_timeout_s

        async def limited_receive() -> Message:
            nonlocal received
            if state["body_done"]:
                return await receive()  # after the body: only a disconnect can come
            with anyio.move_on_after(body_due - time.perf_counter()) as waited:
                message = await receive()
            if waited.cancelled_caught:
                state["too_slow"] = True
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                state["body_done"] = not message.get("more_body", False)
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    state["too_large"] = True
                    return {"type": "http.disconnect"}
            return message

        try:
            declared = int(headers.get(b"content-length", b"0") or 0)
        except ValueError:
            declared = 0
        try:
            if declared > self.max_body_bytes:
                state["too_large"] = True
            else:
                await self.app(scope, limited_receive, send_with_id)
        except Exception as exc:
            if not (state["too_large"] or state["too_slow"]):
                log.error("unhandled %s", type(exc).__name__, exc_info=exc)
                if not state["started"]:
                    await self._answer(
                        InternalError("The server failed this request."), scope, send
                    )
                    state["status"] = 500
        if state["too_large"] and not state["started"]:
            limit = self.max_body_bytes
            await self._answer(PayloadTooLarge(f"The body exceeds {limit} bytes."), scope, send)
            state["status"] = 413
        elif state["too_slow"] and not state["started"]:
            late = BodyTimeout(f"The body was not complete {self.body_timeout_s:g} s in.")
            await self._answer(late, scope, send)
            state["status"] = 408
        self._record(scope, state["status"], time.perf_counter() - started)

    async def _answer(self, error: NmafcError, scope: Scope, send: Send) -> None:
        response = error_response(error, scope.get("path", ""))
        request_id = request_id_var.get()
        if request_id:
            response.headers["x-request-id"] = request_id
        await send(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": response.raw_headers,
            }
        )
        await send({"type": "http.response.body", "body": response.body})

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        route = scope.get("route")
        template = getattr(route, "path_format", None) or "unmatched"
        method = scope.get("method", "GET")
        method = method if method in _METHODS else "OTHER"
        self.metrics.requests.labels(method, template, str(status)).inc()
        self.metrics.request_seconds.labels(method, template).observe(seconds)
        log.info(
            "%s %s %d %.1fms",
            method,
            template,
            status,
            seconds * 1000,
            extra={"method": method, "route": template, "status": status, "ms": seconds * 1000},
        )

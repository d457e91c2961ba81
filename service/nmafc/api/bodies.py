"""Request bodies are UTF-8 JSON text (RFC 8259 §8.1), checked before FastAPI reads them.

Python's ``json.loads``, which FastAPI parses bodies with, also reads UTF-16 and UTF-32,
skips a UTF-8 byte-order mark, and turns the escape ``"\\ud800"`` into a lone surrogate
that no store can keep and no upstream LLM can be sent. Every HTTP route of the API is a
:class:`CheckedBodyRoute`, so before any of that happens:

- a body in another encoding, with a byte-order mark, or declared with another charset is
  415 ``body_not_utf8``;
- a lone surrogate anywhere in the JSON (a value or a key) is 422 naming where it is.
"""

from __future__ import annotations

import codecs
import email.message
import json
import re
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from nmafc.errors import BodyNotUtf8

# A surrogate reaches JSON text only as an escape (raw surrogate bytes are not UTF-8).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_WIDE_BOMS = (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_LONE_SURROGATE = "text must be valid Unicode (no lone surrogates)"


def check_body(body: bytes, content_type: str | None) -> None:
    """Raise unless ``body`` is UTF-8 text whose JSON holds no lone surrogate."""
    if not body:
        return
    charset = _charset(content_type)
    if charset is not None and charset.lower() not in ("utf-8", "utf8"):
        raise BodyNotUtf8(f"The Content-Type names charset={charset}.")
    if body.startswith(codecs.BOM_UTF8):
        raise BodyNotUtf8("The body starts with a UTF-8 byte-order mark.")
    if body.startswith(_WIDE_BOMS) or b"\x00" in body:
        # NUL never occurs in JSON text: between ASCII characters it means UTF-16/32.
        raise BodyNotUtf8("The body is UTF-16 or UTF-32 text.")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyNotUtf8(f"The body is not valid UTF-8 (byte {exc.start}).") from exc
    if _SURROGATE_ESCAPE.search(text) is None:
        return
    try:
        parsed = json.loads(text)
    except ValueError:
        return  # not JSON at all: FastAPI reports that
    where = _lone_surrogate(parsed, ())
    if where is not None:
        raise RequestValidationError(
            [{"type": "string_unicode", "loc": ("body", *where), "msg": _LONE_SURROGATE}]
        )


def _charset(content_type: str | None) -> str | None:
    if not content_type:
        return None
    message = email.message.Message()
    message["content-type"] = content_type
    charset = message.get_param("charset")
    return charset if isinstance(charset, str) else None


def _lone_surrogate(value: Any, path: tuple[str | int, ...]) -> tuple[str | int, ...] | None:
    """Where the first text that is not valid Unicode is (a key is named escaped)."""
    if isinstance(value, str):
        return None if _encodable(value) else path
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, (*path, index))
            if found is not None:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            if not _encodable(key):
                return (*path, key.encode("utf-8", "backslashreplace").decode("ascii"))
            found = _lone_surrogate(item, (*path, key))
            if found is not None:
                return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class CheckedBodyRoute(APIRoute):
    """An API route whose body is checked by :func:`check_body` before it is parsed."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            if request.method in ("POST", "PUT", "PATCH", "DELETE"):
                # Cached on the request: FastAPI reads the same bytes afterwards.
                check_body(await request.body(), request.headers.get("content-type"))
            return await handler(request)

        return checked

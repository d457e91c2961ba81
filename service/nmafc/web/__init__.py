"""The dashboard: the static export of ``web-ui/`` served at ``/`` by the API process.

``make ui`` builds ``web-ui/`` and copies its export into ``static/`` beside this file; the
wheel carries those files, so a ``pip install`` user needs no Node. The files answer only
what no API route matches (the router's fallback), so ``/v1/*``, ``/ws/*``, ``/docs`` and
the probes keep their 404/405 problem answers, and paths outside the export stay 404s.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from anyio.to_thread import run_sync
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

STATIC_DIR = Path(__file__).parent / "static"
BUILD_HINT = "make ui"
# Paths that belong to the API even when no route matches: always a problem+json 404/405.
API_PREFIXES = (
    "/v1/",
    "/ws/",
    "/metrics",
    "/healthz",
    "/readyz",
    "/docs",
    "/redoc",
    "/openapi.json",
)
# Next.js puts a content hash in these names, so browsers may keep them for good.
IMMUTABLE_PREFIX = "/_next/static/"

_NOT_BUILT = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>NMAFC</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto;
 padding: 0 1rem; line-height: 1.5">
<h1>NMAFC is running</h1>
<p>The dashboard was not built into this installation. To add it, install Node 20+ and
npm (<a href="https://nodejs.org">nodejs.org</a>), then from a checkout of the repository run
<code>{BUILD_HINT}</code> (<code>make run</code> does it whenever npm is there) and restart
<code>nmafc serve</code>. A wheel built with <code>make wheel</code> carries the dashboard,
so its users need no Node.</p>
<p>The API works without it: see <a href="/docs">/docs</a>.</p>
</body></html>
"""


def dashboard_built(directory: Path = STATIC_DIR) -> bool:
    """True when the exported dashboard is present."""
    return (directory / "index.html").is_file()


class DashboardFiles(StaticFiles):
    """The export: ``/x/`` serves ``x/index.html`` (``/x`` redirects there). Unknown paths
    raise 404 for the API's problem handler, except page navigations (``Accept: text/html``),
    which get the dashboard's own 404 page."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        _, found = await run_sync(self.lookup_path, path)
        if found is not None and stat.S_ISDIR(found.st_mode):
            if not scope["path"].endswith("/"):
                # Relative, so it holds behind a proxy that rewrites the host.
                query = scope["query_string"].decode("latin-1")
                location = scope["path"] + "/" + (f"?{query}" if query else "")
                return RedirectResponse(location)
            path = os.path.join(path, "index.html")
        try:
            response = await super().get_response(path, scope)
        except HTTPException as exc:
            if exc.status_code != 404 or "text/html" not in Headers(scope=scope).get("accept", ""):
                raise
            page, found = await run_sync(self.lookup_path, "404.html")
            if found is None:
                raise
            return FileResponse(page, stat_result=found, status_code=404)
        if scope["path"].startswith(IMMUTABLE_PREFIX) and response.status_code == 200:
            response.headers["Cache-Control"] = "public, max-age=31536000, immutable"
        return response


def dashboard_app(fallback: ASGIApp, directory: Path = STATIC_DIR) -> ASGIApp:
    """The router's fallback: the dashboard's files, else ``fallback`` (the 404 handler)."""
    files = DashboardFiles(directory=directory) if dashboard_built(directory) else None

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in ("GET", "HEAD")
            or scope["path"].startswith(API_PREFIXES)
        ):
            await fallback(scope, receive, send)
        elif files is not None:
            await files(scope, receive, send)
        elif scope["path"] == "/":
            await HTMLResponse(_NOT_BUILT)(scope, receive, send)
        else:
            await fallback(scope, receive, send)

    return app

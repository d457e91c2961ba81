"""The service commands: ``serve``, ``worker``, ``keys``, ``openapi``."""

from __future__ import annotations

import json
import logging
import signal
import sys
from typing import Any

import anyio

from nmafc import __version__
from nmafc.auth import KeyAdmin, owner_of
from nmafc.settings import Settings

log = logging.getLogger("nmafc.cli")
# Requests in flight at SIGTERM get this long; with the lifespan's own shutdown the process
# is gone within 30 s (a worker supervisor kills what is left at workers.STOP_TIMEOUT_S).
GRACEFUL_SHUTDOWN_S = 10


def serve(
    settings: Settings, host: str | None, port: int | None, workers: int | None = None
) -> int:
    """Run the HTTP service until interrupted: in this process, or in ``workers`` processes."""
    import uvicorn

    from nmafc.api import create_app
    from nmafc.api.logs import configure_logging
    from nmafc.runtime import prepare_server_process
    from nmafc.web import BUILD_HINT, dashboard_built

    server = settings.server.model_copy(
        update={
            "host": host or settings.server.host,
            "port": port or settings.server.port,
            "workers": workers or settings.server.workers,
        }
    )
    settings = settings.model_copy(update={"server": server})
    configure_logging(server.log_format, server.log_level)
    base = f"http://{_url_host(server.host)}:{server.port}"
    dashboard = (
        f"{base}/"
        if dashboard_built()
        else f"not built: run `{BUILD_HINT}` in a checkout of the repository, then restart"
    )
    print(
        f"NMAFC {__version__} on {base}\n"
        f"  API        {base}/v1/memories\n"
        f"  docs       {base}/docs\n"
        f"  live       {base.replace('http', 'ws', 1)}/ws/live\n"
        f"  mcp        {base}/mcp (or `nmafc mcp` over stdio)\n"
        f"  dashboard  {dashboard}\n"
        f"  stores     {settings.resolved_cold_uri()} + {settings.resolved_hot_uri()}"
        + (f"\n  workers    {server.workers} processes" if server.workers > 1 else ""),
        flush=True,
    )
    if server.workers > 1:
        from nmafc.cli.workers import serve_workers

        return serve_workers(settings)
    settings = prepare_server_process(settings)
    uvicorn.run(create_app(settings), **uvicorn_options(settings))
    return 0


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """How uvicorn serves the app, alone or as one of ``--workers``: our logging, not its.

    Idle keep-alive connections close after ``keep_alive_s``, connections stalled mid-header
    after ``header_timeout_s`` (:mod:`nmafc.cli.header_guard`). On SIGTERM requests in flight
    get ``GRACEFUL_SHUTDOWN_S``; their work stops at its deadline or when cancelled.
    """
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    from nmafc.cli.header_guard import header_guarded

    server = settings.server
    return {
        "host": server.host,
        "port": server.port,
        "log_config": None,
        "access_log": False,
        "http": header_guarded(AutoHTTPProtocol, server.header_timeout_s),
        "timeout_keep_alive": server.keep_alive_s,
        "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_S,
    }


def worker(settings: Settings) -> int:
    """Run only the background services (for deployments that keep them off the replicas)."""
    from nmafc.api.logs import configure_logging
    from nmafc.engine.engine import MemoryEngine
    from nmafc.services import declared_services, run_services

    configure_logging(settings.server.log_format, settings.server.log_level)
    engine = MemoryEngine.open(settings)
    services = declared_services(engine, settings)
    if not any(s.enabled for s in services):
        log.error("every background service is disabled (NMAFC_MAINTENANCE_*_ENABLED)")
        engine.close()
        return 1

    async def main() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(run_services, services)
            with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _ in signals:
                    log.info("stopping background services")
                    group.cancel_scope.cancel()
                    return

    try:
        anyio.run(main)
    finally:
        engine.close()
    return 0


def _admin(settings: Settings) -> KeyAdmin:
    from nmafc.storage.cold import ColdStore

    cold = ColdStore.open(settings.resolved_cold_uri())
    pepper = settings.api.key_pepper
    return KeyAdmin(cold, pepper.get_secret_value() if pepper else None)


def keys_create(settings: Settings, agent: str | None, admin: bool, name: str) -> int:
    """Create a key and print its secret once."""
    keys = _admin(settings)
    created = keys.create(agent_id=agent, admin=admin, name=name)
    bound = "admin (any agent)" if created.row.is_admin else f"agent {created.row.agent_id}"
    print(f"created key {created.row.id} ({created.row.prefix}…) for {bound}")
    print("secret (shown once, store it now):")
    print(created.secret)
    return 0


def keys_list(settings: Settings, agent: str | None, include_revoked: bool) -> int:
    rows = _admin(settings).owned(owner_of(agent), include_revoked=include_revoked)
    print(f"{'id':>5}  {'prefix':<15} {'agent':<24} {'created':<20} {'revoked':<20} name")
    for row in rows:
        print(
            f"{row.id:>5}  {row.prefix:<15} {row.agent_id or '* (admin)':<24} "
            f"{row.created_at:%Y-%m-%d %H:%M:%S}  "
            f"{row.revoked_at.strftime('%Y-%m-%d %H:%M:%S') if row.revoked_at else '-':<20} "
            f"{row.name}"
        )
    return 0


def keys_revoke(settings: Settings, ref: str, agent: str | None) -> int:
    row = _admin(settings).revoke(owner_of(agent), ref)
    print(f"revoked key {row.id} ({row.prefix}…)")
    return 0


def openapi(settings: Settings) -> int:
    """Print the OpenAPI document (the committed ``openapi/openapi.json``)."""
    sys.stdout.write(render_openapi(settings))
    return 0


def render_openapi(settings: Settings) -> str:
    from nmafc.api import create_app

    schema: dict[str, Any] = create_app(settings).openapi()
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host

"""The FastAPI app: ``create_app(settings)`` and the lifespan that owns everything stateful.

The lifespan opens ONE :class:`MemoryEngine` (migrating the Cold ROM), the authenticator,
the live-event hub with the log tail that feeds it, and the background services; requests
reach them through the typed :class:`AppState`. The library's inline maintenance is
switched off: here the maintenance service runs passes in the background.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
from anyio.to_thread import run_sync
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from nmafc import __version__
from nmafc.api.errors import install_error_handlers
from nmafc.api.limits import Admission
from nmafc.api.metrics import Metrics
from nmafc.api.middleware import RequestContext
from nmafc.api.routes import chat, events, health, live, memories, scopes
from nmafc.api.state import AppState, RecallThreads
from nmafc.auth import Authenticator
from nmafc.embedding.base import Embedder
from nmafc.engine.engine import MemoryEngine
from nmafc.errors import NmafcError
from nmafc.live import ColdEventLog, LiveHub, LogTail
from nmafc.providers import create_provider, llm_configured
from nmafc.services import declared_services, run_services
from nmafc.settings import Settings, load_settings
from nmafc.web import dashboard_app
from nmafc.wire import OpenAIError, Problem

log = logging.getLogger("nmafc.api")

DESCRIPTION = """Memory for LLM agents: remember conversations, recall a dated, budgeted
context. Tenancy comes from `X-Agent-ID` / `X-Conversation-ID`; with API keys configured,
every route but the probes needs `Authorization: Bearer <key>`. Errors are
`application/problem+json` with a `fix`; the chat proxy's routes (`/v1/chat/*`, `/v1/models`)
answer errors in OpenAI's shape, `{"error": {"message", "type", "param", "code", "fix"}}`."""


def create_app(settings: Settings | None = None, *, embedder: Embedder | None = None) -> FastAPI:
    """The HTTP service over the stores ``settings`` name (default: the environment)."""
    settings = _service_settings(settings or load_settings())
    metrics = Metrics()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[dict[str, AppState]]:
        engine = await _open_engine(settings, embedder)
        try:
            auth = Authenticator(settings, engine.cold_store)
            warning = await run_sync(auth.check_exposure, settings.server.host)
            if warning:
                log.warning("\n%s\n%s\n%s", "!" * 78, warning, "!" * 78)
            hub = LiveHub(
                settings.live.queue_size, settings.live.max_connections, metrics.observe_live
            )
            tail = LogTail(
                ColdEventLog(engine.cold_store),
                hub,
                poll_s=settings.live.poll_interval_s,
                gap_s=settings.live.gap_wait_s,
            )
            engine.subscribe(lambda _scope, _events: tail.nudge())
            collector = metrics.watch(engine.store_sizes)
            services = tuple(declared_services(engine, settings))
            recall_threads = RecallThreads(settings.server.recall_concurrency)
            provider = create_provider(settings.llm) if llm_configured(settings.llm) else None
            admission = Admission(
                settings.server.agent_max_concurrent, settings.server.request_timeout_s
            )
            state = AppState(
                settings, engine, auth, hub, metrics, services, recall_threads, admission, provider
            )
            stop_preload = threading.Event()
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(run_services, services, metrics.observe_job)
                    group.start_soon(tail.run)
                    group.start_soon(
                        _preload, engine, settings.hot.preload_scopes, stop_preload, metrics
                    )
                    try:
                        yield {"nmafc": state}
                    finally:
                        stop_preload.set()
                    group.cancel_scope.cancel()
            finally:
                await run_sync(recall_threads.close)
                if provider is not None:
                    await provider.aclose()
            metrics.registry.unregister(collector)
        except NmafcError as exc:
            log.error("cannot start: [%s] %s Fix: %s", exc.code, exc.detail, exc.fix)
            raise
        finally:
            await run_sync(engine.close)

    app = FastAPI(
        title="NMAFC",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        # Public when on: the schema describes routes, never a tenant's data.
        docs_url="/docs" if settings.server.docs else None,
        redoc_url="/redoc" if settings.server.docs else None,
        openapi_url="/openapi.json" if settings.server.docs else None,
    )
    install_error_handlers(app, settings.server.retry_after_s)
    for module in (memories, events, scopes, chat, health, live):
        app.include_router(module.router)
    # The dashboard answers only what no route matches, so API 404/405s stay problems.
    app.router.default = dashboard_app(app.router.default)
    if settings.server.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.server.cors_origins,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["X-Request-ID", "Retry-After", "X-NMAFC-Memory"],
        )
    app.add_middleware(
        RequestContext, metrics=metrics, max_body_bytes=settings.server.max_body_bytes
    )
    app.openapi = partial(_openapi, app)  # type: ignore[method-assign]
    return app


async def _preload(
    engine: MemoryEngine, max_scopes: int, stop: threading.Event, metrics: Metrics
) -> None:
    """Warm the caches with recently written scopes, in the background, while serving."""
    if max_scopes <= 0:
        return
    started = time.perf_counter()
    metrics.preloading.set(1)
    try:
        # Not abandoned on cancel: the engine closes only after this thread has stopped,
        # which ``stop`` makes it do after the scope it is loading.
        loaded = await run_sync(engine.preload, max_scopes, stop)
    except Exception as exc:  # a cache warm-up must never take the service down
        log.warning("preloading working sets stopped: %s", exc)
        return
    finally:
        metrics.preloading.set(0)
    log.info("preloaded %d scopes in %.1f s", loaded, time.perf_counter() - started)


def _service_settings(settings: Settings) -> Settings:
    """The library's inline maintenance is off: the background service runs the passes."""
    consolidation = settings.consolidation.model_copy(update={"inline": False})
    return settings.model_copy(update={"consolidation": consolidation})


async def _open_engine(settings: Settings, embedder: Embedder | None) -> MemoryEngine:
    try:
        return await run_sync(partial(MemoryEngine.open, settings, embedder=embedder))
    except NmafcError as exc:
        log.error("cannot open the stores: [%s] %s Fix: %s", exc.code, exc.detail, exc.fix)
        raise


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's schema plus the ``Problem`` model every error response refers to."""
    if app.openapi_schema is None:
        from fastapi.openapi.utils import get_openapi

        schema = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for model in (Problem, OpenAIError):
            found = model.model_json_schema(ref_template="#/components/schemas/{model}")
            components.update(found.pop("$defs", {}))
            components[model.__name__] = found
        app.openapi_schema = schema
    return app.openapi_schema

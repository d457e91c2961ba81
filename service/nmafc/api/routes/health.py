"""Probes and metrics: ``/healthz`` (process), ``/readyz`` (stores), ``/metrics``."""

from __future__ import annotations

from anyio.to_thread import run_sync
from fastapi import APIRouter, Response

from nmafc.api.bodies import CheckedBodyRoute
from nmafc.api.deps import AdminDep, EngineDep, MetricsDep
from nmafc.api.errors import problem_responses
from nmafc.api.metrics import CONTENT_TYPE
from nmafc.wire import Health, Ready

router = APIRouter(tags=["operations"], route_class=CheckedBodyRoute)


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up (no store is touched)."""
    return Health(status="ok")


@router.get("/readyz", response_model=Ready, responses=problem_responses(503))
async def readyz(engine: EngineDep) -> Ready:
    """The Cold ROM answers (503 with Retry-After otherwise); ``degraded`` without Hot."""
    stores = await run_sync(engine.readiness)
    return Ready(status="ready" if stores["hot"] == "ok" else "degraded", stores=stores)


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {"content": {"text/plain": {"schema": {"type": "string"}}}},
        **problem_responses(401, 404),
    },
)
async def metrics(_: AdminDep, registry: MetricsDep) -> Response:
    """Prometheus metrics (an admin key when auth is on); labels never carry tenant ids."""
    body = await run_sync(registry.render)
    return Response(body, media_type=CONTENT_TYPE)

"""Operations routes: liveness, readiness, Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from service.api.deps import RegistryDep
from service.api.errors import error_response
from service.errors import NotReady
from service.schemas.health import Health, Readiness

router = APIRouter(tags=["operations"])


@router.get("/healthz")
async def healthz() -> Health:
    """Alive: the process answers. Depends on nothing."""
    return Health(status="ok")


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"description": "Not ready: the error envelope says why."}},
)
async def readyz(registry: RegistryDep) -> Response | Readiness:
    """Ready: every configured table is loaded and indexed; 503 with the reason otherwise."""
    reason = registry.unready_reason()
    if reason is not None:
        return error_response(NotReady(reason))
    return Readiness(status="ready", tables=registry.names())


@router.get("/metrics", response_class=Response)
def metrics() -> Response:
    """Prometheus metrics in the text exposition format."""
    # A plain def: FastAPI renders it on a worker thread, off the event loop.
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

"""Routes over a table's versions: rows followed through its checkpoints, two versions compared."""

from __future__ import annotations

from fastapi import APIRouter, Response

from service.api.deps import ContextDep
from service.api.routing import OrjsonRoute
from service.operations.catalog import DRIFT, TRAJECTORY, respond
from service.operations.serialize import json_response
from service.schemas.training import (
    DriftRequest,
    DriftResponse,
    TrajectoryRequest,
    TrajectoryResponse,
)

router = APIRouter(prefix="/v1/tables/{table}", tags=["training"], route_class=OrjsonRoute)


@router.post("/trajectory", response_model=TrajectoryResponse)
async def trajectory(body: TrajectoryRequest, context: ContextDep) -> Response:
    """Rows at every checkpoint in the explorer's PCA basis, with norm and movement from init."""
    return json_response(await respond(TRAJECTORY, body, context))


@router.post("/drift", response_model=DriftResponse)
async def drift(body: DriftRequest, context: ContextDep) -> Response:
    """How rows moved between two checkpoints or two tables; named tokens' neighbour lists."""
    return json_response(await respond(DRIFT, body, context))

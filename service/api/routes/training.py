"""Query routes of training: rows followed through checkpoints, two versions compared.

Each route hands its raw body to the one door (operations/door.py, through api/query.py); the
fast path calls the same door without the routing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.openapi import request_body
from service.api.query import answered
from service.operations.catalog import DRIFT, TRAJECTORY
from service.schemas.training import DriftResponse, TrajectoryResponse

router = APIRouter(prefix="/v1/tables/{table}", tags=["training"])


@router.post(
    "/trajectory", response_model=TrajectoryResponse, openapi_extra=request_body(TRAJECTORY)
)
async def trajectory(table: str, request: Request) -> Response:
    """Rows at every checkpoint in the explorer's PCA basis, with norm and movement from init."""
    return await answered(TRAJECTORY, table, request)


@router.post("/drift", response_model=DriftResponse, openapi_extra=request_body(DRIFT))
async def drift(table: str, request: Request) -> Response:
    """How rows moved between two checkpoints or two tables; named tokens' neighbour lists."""
    return await answered(DRIFT, table, request)

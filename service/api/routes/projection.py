"""Query routes of projection: a table's PCA picture, and any rows or vectors placed on it.

Each route hands its raw body to the one door (operations/door.py, through api/query.py); the
fast path calls the same door without the routing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.openapi import request_body
from service.api.query import answered
from service.operations.catalog import PROJECT, PROJECTION
from service.schemas.projection import ProjectionResponse, ProjectResponse

router = APIRouter(prefix="/v1/tables/{table}", tags=["projection"])


@router.post(
    "/projection", response_model=ProjectionResponse, openapi_extra=request_body(PROJECTION)
)
async def projection(table: str, request: Request) -> Response:
    """PCA coordinates of the first N rows, N seeded random rows or the named tokens."""
    return await answered(PROJECTION, table, request)


@router.post("/project", response_model=ProjectResponse, openapi_extra=request_body(PROJECT))
async def project(table: str, request: Request) -> Response:
    """Coordinates of any tokens or raw vectors in the table's projection basis."""
    return await answered(PROJECT, table, request)

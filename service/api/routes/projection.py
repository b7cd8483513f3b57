"""Projection routes: a table's PCA picture, and any rows or raw vectors placed on it."""

from __future__ import annotations

from fastapi import APIRouter, Response

from service.api.deps import ContextDep
from service.api.routing import OrjsonRoute
from service.operations.catalog import PROJECT, PROJECTION, respond
from service.operations.serialize import json_response
from service.schemas.projection import (
    ProjectionRequest,
    ProjectionResponse,
    ProjectRequest,
    ProjectResponse,
)

router = APIRouter(prefix="/v1/tables/{table}", tags=["projection"], route_class=OrjsonRoute)


@router.post("/projection", response_model=ProjectionResponse)
async def projection(body: ProjectionRequest, context: ContextDep) -> Response:
    """PCA coordinates of the first N rows, N seeded random rows or the named tokens."""
    return json_response(await respond(PROJECTION, body, context))


@router.post("/project", response_model=ProjectResponse)
async def project(body: ProjectRequest, context: ContextDep) -> Response:
    """Coordinates of any tokens or raw vectors in the table's projection basis."""
    return json_response(await respond(PROJECT, body, context))

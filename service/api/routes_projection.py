"""Projection routes: a table's PCA picture, and any rows or raw vectors placed on it.

The fit (once per table load) and projecting up to max_projection_points rows run on a worker
thread, never on the event loop, at most projection_concurrency at a time; answers are built
there too and serialised once with orjson.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import numpy as np
from fastapi import APIRouter, Request, Response

from service.api.deps import TableDep
from service.api.limits import Limits, within
from service.api.resolve import Resolver
from service.api.routing import OrjsonRoute
from service.api.serialize import dumps, json_response
from service.config import Settings
from service.engine.projection import Basis, Projector
from service.engine.registry import ServedTable
from service.metrics import timed
from service.schemas_projection import (
    ProjectionRequest,
    ProjectionResponse,
    ProjectRequest,
    ProjectResponse,
    TokenSelection,
)

router = APIRouter(prefix="/v1/tables/{table}", tags=["projection"], route_class=OrjsonRoute)

AXES = ("x", "y", "z")


@router.post("/projection", response_model=ProjectionResponse)
async def projection(body: ProjectionRequest, served: TableDep, request: Request) -> Response:
    """PCA coordinates of the first N rows, N seeded random rows or the named tokens."""
    return json_response(await off_loop(request, projection_body, body, served))


@router.post("/project", response_model=ProjectResponse)
async def project(body: ProjectRequest, served: TableDep, request: Request) -> Response:
    """Coordinates of any tokens or raw vectors in the table's projection basis."""
    return json_response(await off_loop(request, project_body, body, served))


async def off_loop(
    request: Request, work: Callable[..., bytes], body: Any, served: ServedTable
) -> bytes:
    """`work(body, served, settings, limits)` on a worker thread, at most
    projection_concurrency of them at once."""
    state = request.app.state
    limiter = getattr(state, "projection_limiter", None)
    if limiter is None:  # made here: an anyio limiter belongs to the running event loop
        limiter = state.projection_limiter = anyio.CapacityLimiter(
            state.settings.projection_concurrency
        )
    args = (body, served, state.settings, state.limits)
    return await anyio.to_thread.run_sync(work, *args, limiter=limiter)


def projection_body(
    body: ProjectionRequest, served: ServedTable, settings: Settings, limits: Limits
) -> bytes:
    """The /projection answer: the basis's variance shares and every selected row's point."""
    resolver = Resolver(served, limits)
    projector = served.projector
    if isinstance(body.selection, TokenSelection):
        tokens = body.selection.tokens
        _check_points(len(tokens), settings)
        rows = projector.named_rows(resolver.resolve(tokens).row_array(tokens).tolist())
    else:
        rows = projector.select(body.selection, _check_points(body.points, settings), body.seed)
    with timed("projection"):
        basis, dims = _basis(projector, settings, body.dims)
        coordinates = projector.project_rows(basis, rows, dims)
    return dumps(
        {
            "matched": resolver.matched,
            "method": body.method,
            "dims": dims,
            "explained_variance_ratio": basis.explained_variance_ratio[:dims].tolist(),
            "sample_rows": basis.sample_rows,
            "points": row_points(served, rows, coordinates),
        }
    )


def project_body(
    body: ProjectRequest, served: ServedTable, settings: Settings, limits: Limits
) -> bytes:
    """The /project answer: a point for every token, or coordinates for every raw vector."""
    resolver = Resolver(served, limits)
    projector = served.projector
    with timed("project"):
        basis, dims = _basis(projector, settings, body.dims)
        if body.tokens is not None:
            limits.check_batch(len(body.tokens))
            rows = resolver.resolve(body.tokens).row_array(body.tokens)
            rows = projector.named_rows(rows.tolist())
            points = row_points(served, rows, projector.project_rows(basis, rows, dims))
        else:
            assert body.vectors is not None
            limits.check_batch(len(body.vectors))
            coordinates = projector.project_vectors(basis, body.vectors, dims)
            points = [dict(zip(AXES, point, strict=False)) for point in coordinates.tolist()]
    return dumps({"matched": resolver.matched, "dims": dims, "points": points})


def row_points(served: ServedTable, rows: np.ndarray, coordinates: np.ndarray) -> list[Any]:
    """{"token", "id", "norm", "x", "y"[, "z"], "metadata"} for each row.

    Built from plain lists, column by column: numpy scalars and per-point zips cost three
    times as much at 20,000 points.
    """
    table = served.table
    ids = rows.tolist()
    columns = list(table.metadata.items())
    points = [
        {"token": table.tokens[row], "id": row, "norm": norm}
        for row, norm in zip(ids, table.norms[rows].tolist(), strict=True)
    ]
    for axis, values in zip(AXES, coordinates.T.tolist(), strict=False):
        for point, value in zip(points, values, strict=True):
            point[axis] = value
    for point, row in zip(points, ids, strict=True):
        point["metadata"] = {name: column[row] for name, column in columns}
    return points


def _basis(projector: Projector, settings: Settings, dims: int) -> tuple[Basis, int]:
    basis = projector.basis(settings.projection_sample_rows)
    return basis, projector.check_dims(basis, dims)


def _check_points(points: int, settings: Settings) -> int:
    return within("projection points", points, settings.max_projection_points)

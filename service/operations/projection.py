"""Answering projection requests: a table's PCA picture, and rows or vectors placed on it.

The fit (once per table load), projecting up to max_projection_points rows and writing the
answer run as analyses in the projections' queue (runtime/analyses.py): on a thread of their
own, never on the event loop, at most projection_concurrency at a time (a 20,000-point answer
holds about 40 MB while it is built).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from service.engine.analysis.diagnostics import DEFAULT_FRACTION
from service.engine.analysis.projection import Basis, Projector
from service.engine.served import ServedTable
from service.metrics import timed
from service.operations.answers import add_readable, dumps
from service.operations.context import Context
from service.operations.limits import within
from service.operations.resolving import Resolver, vector_of
from service.schemas.projection import ProjectionRequest, ProjectRequest, TokenSelection

AXES = ("x", "y", "z")


async def projection(body: ProjectionRequest, context: Context) -> bytes:
    """The /projection answer: the basis's variance shares and every selected row's point."""
    return await _off_loop(context, _projection, body)


async def project(body: ProjectRequest, context: Context) -> bytes:
    """The /project answer: a point for every token, or coordinates for every raw vector."""
    return await _off_loop(context, _project, body)


async def _off_loop(context: Context, work: Any, body: Any) -> bytes:
    return await context.runtime.projections.run(work, body, context)


def _projection(body: ProjectionRequest, context: Context) -> bytes:
    served, limits = context.served, context.limits
    resolver = Resolver(served, limits)
    projector = served.projector
    rows, words = _selected_rows(body, context, resolver)
    with timed("projection"):
        if body.fit == "selection":
            basis, dims = _selection_basis(projector, context, rows, body.dims)
        else:
            basis, dims = _basis(projector, context, body.dims)
        coordinates = projector.project_rows(basis, rows, dims)
    answer = {
        "matched": resolver.matched,
        "method": body.method,
        "fit": body.fit,
        "dims": dims,
        "explained_variance_ratio": basis.explained_variance_ratio[:dims].tolist(),
        "sample_rows": basis.sample_rows,
        "points": row_points(served, rows, coordinates),
    }
    if words is not None:
        answer["words"] = words
    return dumps(answer)


def _selected_rows(
    body: ProjectionRequest, context: Context, resolver: Resolver
) -> tuple[np.ndarray, int | None]:
    """The rows to plot, and how many are words when the selection asks for words."""
    limits, projector = context.limits, context.served.projector
    if isinstance(body.selection, TokenSelection):
        tokens = body.selection.tokens
        limits.check_projection_points(len(tokens))
        return projector.named_rows(resolver.resolve(tokens).row_array(tokens).tolist()), None
    limits.check_projection_points(body.points)
    if body.selection == "words":
        return projector.select_words(body.points, untrusted_rows(context.served))
    return projector.select(body.selection, body.points, body.seed), None


def untrusted_rows(served: ServedTable) -> np.ndarray:
    """Rows a picture of words leaves out: the reference rows of the table's default
    diagnostics (computed once per load, in the background after it) and the suspects ranked
    against them. Not the suspects of a ranking by norm: its lowest norms include frequent
    function words."""
    ranking = served.diagnostics.default().ranking
    if ranking.indicator != "reference_cosine":
        return ranking.reference
    return np.union1d(ranking.reference, ranking.suspects(DEFAULT_FRACTION))


def _project(body: ProjectRequest, context: Context) -> bytes:
    served, limits = context.served, context.limits
    resolver = Resolver(served, limits)
    projector = served.projector
    with timed("project"):
        basis, dims = _basis(projector, context, body.dims)
        if body.tokens is not None:
            limits.check_batch(len(body.tokens))
            rows = resolver.resolve(body.tokens).row_array(body.tokens)
            rows = projector.named_rows(rows.tolist())
            points = row_points(served, rows, projector.project_rows(basis, rows, dims))
        else:
            vectors = _vectors(body)
            limits.check_batch(len(vectors))
            coordinates = projector.project_vectors(basis, vectors, dims)
            points = [dict(zip(AXES, point, strict=False)) for point in coordinates.tolist()]
    return dumps({"matched": resolver.matched, "dims": dims, "points": points})


def _vectors(body: ProjectRequest) -> list[np.ndarray]:
    if body.vectors is not None:
        return [np.asarray(vector, dtype=np.float64) for vector in body.vectors]
    return [vector_of(None, encoded) for encoded in body.vectors_b64 or []]


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
    add_readable(table, points)
    return points


def _selection_basis(
    projector: Projector, context: Context, rows: np.ndarray, dims: int
) -> tuple[Basis, int]:
    """A PCA of exactly `rows`, at most projection_sample_rows of them: a request's fit then
    costs no more than the table's own (once per load)."""
    within(
        "rows of a fit on the selection", rows.size, context.limits.settings.projection_sample_rows
    )
    basis = projector.fit_selection(rows)
    return basis, projector.check_dims(basis, dims)


def _basis(projector: Projector, context: Context, dims: int) -> tuple[Basis, int]:
    basis = projector.basis(context.limits.settings.projection_sample_rows)
    return basis, projector.check_dims(basis, dims)

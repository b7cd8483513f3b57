"""Diagnostics routes: which rows not to trust, and how good the table is overall."""

from __future__ import annotations

from fastapi import APIRouter, Response

from service.api.deps import ContextDep
from service.api.routing import OrjsonRoute
from service.operations.catalog import DIAGNOSTICS, EVALUATE, respond
from service.operations.serialize import json_response
from service.schemas.diagnostics import (
    DiagnosticsRequest,
    DiagnosticsResponse,
    EvaluateRequest,
    EvaluateResponse,
)

router = APIRouter(prefix="/v1/tables/{table}", tags=["diagnostics"], route_class=OrjsonRoute)


@router.post("/diagnostics", response_model=DiagnosticsResponse)
async def diagnostics(body: DiagnosticsRequest, context: ContextDep) -> Response:
    """Suspect (possibly under-trained) rows, named rows' standing, norms and count figures."""
    return json_response(await respond(DIAGNOSTICS, body, context))


@router.post("/evaluate", response_model=EvaluateResponse)
async def evaluate(body: EvaluateRequest, context: ContextDep) -> Response:
    """gensim's analogy accuracy or word-pair correlations for a set sent or built in."""
    return json_response(await respond(EVALUATE, body, context))

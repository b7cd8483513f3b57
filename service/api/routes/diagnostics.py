"""Query routes of diagnostics: which rows not to trust, and how good the table is overall.

Each route hands its raw body to the one door (operations/door.py, through api/query.py); the
fast path calls the same door without the routing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.openapi import request_body
from service.api.query import answered
from service.operations.catalog import DIAGNOSTICS, EVALUATE
from service.schemas.diagnostics import DiagnosticsResponse, EvaluateResponse

router = APIRouter(prefix="/v1/tables/{table}", tags=["diagnostics"])


@router.post(
    "/diagnostics", response_model=DiagnosticsResponse, openapi_extra=request_body(DIAGNOSTICS)
)
async def diagnostics(table: str, request: Request) -> Response:
    """Suspect (possibly under-trained) rows, named rows' standing, norms and count figures."""
    return await answered(DIAGNOSTICS, table, request)


@router.post("/evaluate", response_model=EvaluateResponse, openapi_extra=request_body(EVALUATE))
async def evaluate(table: str, request: Request) -> Response:
    """gensim's analogy accuracy or word-pair correlations for a set sent or built in."""
    return await answered(EVALUATE, table, request)

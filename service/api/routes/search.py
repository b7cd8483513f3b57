"""Query routes of search: cosine neighbours and analogies, batched across requests.

Each route hands its raw body to the one door (operations/door.py, through api/query.py); the
fast path calls the same door without the routing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.openapi import request_body
from service.api.query import answered
from service.operations.catalog import ANALOGY, NEIGHBORS
from service.schemas.search import NeighborsBatchResponse, NeighborsResponse

router = APIRouter(prefix="/v1/tables/{table}", tags=["search"])


@router.post(
    "/neighbors",
    response_model=NeighborsResponse | NeighborsBatchResponse,
    openapi_extra=request_body(NEIGHBORS),
)
async def neighbors(table: str, request: Request) -> Response:
    """Top-k cosine neighbours of a token, an id, a raw vector or a text (or a batch of them)."""
    return await answered(NEIGHBORS, table, request)


@router.post(
    "/analogy",
    response_model=NeighborsResponse | NeighborsBatchResponse,
    openapi_extra=request_body(ANALOGY),
)
async def analogy(table: str, request: Request) -> Response:
    """Analogies (gensim most_similar / most_similar_cosmul semantics); inputs never answer."""
    return await answered(ANALOGY, table, request)

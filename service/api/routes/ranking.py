"""Query routes of ranking: every row's score against one query, and ranks.

Each route hands its raw body to the one door (operations/door.py, through api/query.py); the
fast path calls the same door without the routing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.openapi import request_body
from service.api.query import answered
from service.operations.catalog import COSINES, RANK
from service.schemas.ranking import CosinesResponse, RankResponse

router = APIRouter(prefix="/v1/tables/{table}", tags=["ranking"])


@router.post("/cosines", response_model=CosinesResponse, openapi_extra=request_body(COSINES))
async def cosines(table: str, request: Request) -> Response:
    """Every row's score against one query, in row order (gensim's most_similar(topn=None))."""
    return await answered(COSINES, table, request)


@router.post("/rank", response_model=RankResponse, openapi_extra=request_body(RANK))
async def rank(table: str, request: Request) -> Response:
    """How many rows are closer to a token than each other token is (gensim's rank)."""
    return await answered(RANK, table, request)

"""Query routes of vectors: lookup, pairwise similarity and output scoring.

Each route hands its raw body to the one door (operations/door.py, through api/query.py); the
fast path calls the same door without the routing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.openapi import request_body
from service.api.query import answered
from service.operations.catalog import LOOKUP, SCORE, SIMILARITY
from service.schemas.vectors import LookupResponse, ScoreResponse, SimilarityResponse

router = APIRouter(prefix="/v1/tables/{table}", tags=["vectors"])


@router.post("/lookup", response_model=LookupResponse, openapi_extra=request_body(LOOKUP))
async def lookup(table: str, request: Request) -> Response:
    """Token -> id + raw vector, or id -> token + raw vector, for a batch of keys."""
    return await answered(LOOKUP, table, request)


@router.post(
    "/similarity", response_model=SimilarityResponse, openapi_extra=request_body(SIMILARITY)
)
async def similarity(table: str, request: Request) -> Response:
    """Cosine of token pairs, or the cosine matrix of a list of tokens."""
    return await answered(SIMILARITY, table, request)


@router.post("/score", response_model=ScoreResponse, openapi_extra=request_body(SCORE))
async def score(table: str, request: Request) -> Response:
    """Raw dot product of a vector with every row (a tied output layer): top-k and a target."""
    return await answered(SCORE, table, request)

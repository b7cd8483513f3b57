"""Vector routes: lookup, pairwise similarity and output scoring."""

from __future__ import annotations

from fastapi import APIRouter, Response

from service.api.deps import ContextDep
from service.api.routing import OrjsonRoute
from service.operations.catalog import LOOKUP, SCORE, SIMILARITY, respond
from service.operations.serialize import json_response
from service.schemas.vectors import (
    LookupRequest,
    LookupResponse,
    ScoreRequest,
    ScoreResponse,
    SimilarityRequest,
    SimilarityResponse,
)

router = APIRouter(prefix="/v1/tables/{table}", tags=["vectors"], route_class=OrjsonRoute)


@router.post("/lookup", response_model=LookupResponse)
async def lookup(body: LookupRequest, context: ContextDep) -> Response:
    """Token -> id + raw vector, or id -> token + raw vector, for a batch of keys."""
    return json_response(await respond(LOOKUP, body, context))


@router.post("/similarity", response_model=SimilarityResponse)
async def similarity(body: SimilarityRequest, context: ContextDep) -> Response:
    """Cosine of token pairs, or the cosine matrix of a list of tokens."""
    return json_response(await respond(SIMILARITY, body, context))


@router.post("/score", response_model=ScoreResponse)
async def score(body: ScoreRequest, context: ContextDep) -> Response:
    """Raw dot product of a vector with every row (a tied output layer): top-k and a target."""
    return json_response(await respond(SCORE, body, context))

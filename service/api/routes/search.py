"""Search routes: cosine neighbours and analogies, batched across requests.

Each route validates its body and hands it to operations.respond, which answers it (from the
cache when the query names only tokens). direct.py answers the same way without the routing.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from service.api.deps import ContextDep
from service.api.routing import OrjsonRoute
from service.operations.catalog import ANALOGY, NEIGHBORS, respond
from service.operations.serialize import json_response
from service.schemas.search import (
    AnalogyBody,
    NeighborsBatchResponse,
    NeighborsBody,
    NeighborsResponse,
)

router = APIRouter(prefix="/v1/tables/{table}", tags=["search"], route_class=OrjsonRoute)

RESPONSES = NeighborsResponse | NeighborsBatchResponse


@router.post("/neighbors", response_model=RESPONSES)
async def neighbors(body: NeighborsBody, context: ContextDep) -> Response:
    """Top-k cosine neighbours of a token, an id or a raw vector (or a batch of such queries)."""
    return json_response(await respond(NEIGHBORS, body, context))


@router.post("/analogy", response_model=RESPONSES)
async def analogy(body: AnalogyBody, context: ContextDep) -> Response:
    """Analogies (gensim most_similar / most_similar_cosmul semantics); inputs never answer."""
    return json_response(await respond(ANALOGY, body, context))

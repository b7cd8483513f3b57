"""The text route: how a table's tokenizer splits text into rows, and ids back into text."""

from __future__ import annotations

from fastapi import APIRouter, Response

from service.api.deps import ContextDep
from service.api.routing import OrjsonRoute
from service.operations.catalog import TOKENIZE, respond
from service.operations.serialize import json_response
from service.schemas.text import TokenizeAnswer, TokenizeRequest

router = APIRouter(prefix="/v1/tables/{table}", tags=["text"], route_class=OrjsonRoute)


@router.post("/tokenize", response_model=TokenizeAnswer)
async def tokenize(body: TokenizeRequest, context: ContextDep) -> Response:
    """Text -> pieces (row ids, character offsets, words; one row or several), or ids -> text."""
    return json_response(await respond(TOKENIZE, body, context))

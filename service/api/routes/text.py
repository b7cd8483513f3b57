"""Query route of text: how a table's tokenizer splits text into rows, and ids into text.

Each route hands its raw body to the one door (operations/door.py, through api/query.py); the
fast path calls the same door without the routing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.openapi import request_body
from service.api.query import answered
from service.operations.catalog import TOKENIZE
from service.schemas.text import TokenizeAnswer

router = APIRouter(prefix="/v1/tables/{table}", tags=["text"])


@router.post("/tokenize", response_model=TokenizeAnswer, openapi_extra=request_body(TOKENIZE))
async def tokenize(table: str, request: Request) -> Response:
    """Text -> pieces (row ids, character offsets, words; one row or several), or ids -> text."""
    return await answered(TOKENIZE, table, request)

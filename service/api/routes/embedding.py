"""Text embedding routes: OpenAI's POST /v1/embeddings and TEI's POST /embed.

Each route hands its raw body to operations/embedding.py `answer` (which parses and validates
it once, with the door's steps); the table is named in the body (OpenAI's `model`), or is the
one /embed is configured to use (`embed_table`: by default the first static model served).
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from service.api.openapi import request_body
from service.api.query import as_response
from service.operations.catalog import Operation
from service.operations.embedding import EMBED, EMBEDDINGS, answer
from service.schemas.embedding import EmbeddingsResponse

router = APIRouter(tags=["embeddings"])


async def answered(operation: Operation, request: Request) -> Response:
    """The embedding door's answer to this request, as a Starlette response."""
    content_type = request.headers.get("content-type", "")
    services = request.app.state.services
    return as_response(await answer(operation, await request.body(), content_type, services))


@router.post(
    "/v1/embeddings",
    response_model=EmbeddingsResponse,
    openapi_extra=request_body(EMBEDDINGS),
)
async def embeddings(request: Request) -> Response:
    """OpenAI's embeddings: texts or token ids -> one vector each, from a static model."""
    return await answered(EMBEDDINGS, request)


@router.post("/embed", response_model=list[list[float]], openapi_extra=request_body(EMBED))
async def embed(request: Request) -> Response:
    """TEI's embed: texts -> one vector each, from the configured static model (embed_table)."""
    return await answered(EMBED, request)

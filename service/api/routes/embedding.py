"""Text embedding routes: OpenAI's POST /v1/embeddings and TEI's POST /embed.

Registered from their operations like every query route (api/query.py); each hands its raw
body to operations/embedding.py `answer` (which parses and validates it once, with the door's
steps), as the table is named in the body (OpenAI's `model`), or is the one /embed is
configured to use (`embed_table`: by default the first static model served).
"""

from __future__ import annotations

from fastapi import Request, Response

from service.api.query import as_response, query_router
from service.operations.catalog import Operation
from service.operations.embedding import EMBED, EMBEDDINGS, answer


async def answered(operation: Operation, request: Request) -> Response:
    """The embedding answer to this request, as a Starlette response."""
    content_type = request.headers.get("content-type", "")
    services = request.app.state.services
    return as_response(await answer(operation, await request.body(), content_type, services))


router = query_router((EMBEDDINGS, EMBED), answered)

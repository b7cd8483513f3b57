"""FastAPI's door to a query: the route hands its raw body to operations.door.answer.

A query route declares no body parameter, so FastAPI neither parses nor validates it; the door
does both, once, exactly as on the fast path. The request model is still documented in the
OpenAPI document (service/api/openapi.py).
"""

from __future__ import annotations

from fastapi import Request, Response

from service.errors import Encoded
from service.operations.catalog import Operation
from service.operations.door import answer


async def answered(operation: Operation, table: str, request: Request) -> Response:
    """The door's answer to this request, as a Starlette response."""
    encoded = await answer(
        operation,
        table,
        await request.body(),
        request.headers.get("content-type", ""),
        request.app.state.services,
    )
    return as_response(encoded)


def as_response(encoded: Encoded) -> Response:
    """An encoded answer as a Starlette response, its headers as they are."""
    response = Response(encoded.body, encoded.status)
    response.raw_headers = encoded.headers
    return response

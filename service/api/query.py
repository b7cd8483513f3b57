"""The query routes, registered from the operation catalogue: each hands its raw body to the door.

A query route declares no body parameter, so FastAPI neither parses nor validates it; the door
(operations/door.py `answer`) does both, once, exactly as on the direct path. What the OpenAPI
document says of a route (its path, tag, description, answer, errors and request body, by
reference to the model the door validates with: service/api/openapi.py) comes from its
`Operation`, so a route is declared once, in operations/catalog.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

from fastapi import APIRouter, Request, Response

from service.api.deps import TableName
from service.api.errors import error_responses
from service.api.openapi import request_body
from service.errors import Encoded
from service.operations.catalog import Operation
from service.operations.door import answer

# What a route answers with: (the operation, the request), and the table's name when the path
# names it (answered below; the text embeddings' bodies name theirs: api/routes/embedding.py).
Answering = Callable[..., Awaitable[Response]]

# A query can be refused before it runs, and its JSON body too.
QUERY_ERRORS = error_responses(400, 401, 404, 413, 415, 422, 429, 503)


async def answered(operation: Operation, request: Request, table_name: str) -> Response:
    """The door's answer to this request, as a Starlette response."""
    encoded = await answer(
        operation,
        table_name,
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


def query_router(operations: Iterable[Operation], answering: Answering = answered) -> APIRouter:
    """A POST route for each operation at its path, answered by `answering`."""
    router = APIRouter(responses=QUERY_ERRORS)
    for operation in operations:
        router.add_api_route(
            operation.route.path,
            endpoint(operation, answering),
            methods=["POST"],
            name=operation.name,
            description=operation.description,
            tags=[operation.feature],
            response_model=operation.response,
            openapi_extra=request_body(operation),
        )
    return router


def endpoint(operation: Operation, answering: Answering) -> Callable[..., Awaitable[Response]]:
    """The route function of `operation`: the table's name from the path, when it has one."""
    if "{table}" not in operation.route.path:

        async def body_names_table(request: Request) -> Response:
            return await answering(operation, request)

        return body_names_table

    async def path_names_table(table_name: TableName, request: Request) -> Response:
        return await answering(operation, request, table_name)

    return path_names_table

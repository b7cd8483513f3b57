"""The fast path: query requests handed to the one door without FastAPI's per-request machinery.

The event loop and the search worker share one GIL, so every microsecond of Python spent per
request on the loop is one the worker cannot use. Under distinct-vector load, FastAPI's
routing, dependency solving and exception plumbing were about half of the loop's time per
request (py-spy). This middleware, innermost (so access control, admission limits and metrics
still apply), sends POST /v1/tables/{table}/{operation} straight to operations.door.answer,
the same function the FastAPI route calls: the same parsing, validation, answer and errors, by
construction. The `direct_queries` setting turns it off, for the A/B in BENCHMARKS.md.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from service.operations.catalog import OPERATIONS, Operation
from service.operations.door import Services, answer

PREFIX = "/v1/tables/"


class FastPathMiddleware:
    """Answer POST /v1/tables/{table}/{operation} through the door, unrouted."""

    def __init__(self, app: ASGIApp, services: Services) -> None:
        self.app = app
        self.services = services

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = target_of(scope)
        if target is None:
            await self.app(scope, receive, send)
            return
        table, operation = target
        scope["route"] = operation.route
        body = await read_body(receive)
        encoded = await answer(operation, table, body, content_type(scope), self.services)
        await send({"type": "http.response.start", "status": encoded.status,
                    "headers": encoded.headers})  # fmt: skip
        await send({"type": "http.response.body", "body": encoded.body})


def target_of(scope: Scope) -> tuple[str, Operation] | None:
    """(table, operation) for a POST to a query route."""
    if scope["type"] != "http" or scope["method"] != "POST":
        return None
    path: str = scope["path"]
    if not path.startswith(PREFIX):
        return None
    parts = path[len(PREFIX) :].split("/")
    if len(parts) != 2 or parts[1] not in OPERATIONS:
        return None
    return parts[0], OPERATIONS[parts[1]]


async def read_body(receive: Receive) -> bytes:
    """The whole body (the body middleware has already read and bounded it: one message)."""
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def content_type(scope: Scope) -> str:
    """The request's Content-Type ('' when it has none)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            return str(value.decode("latin-1"))
    return ""

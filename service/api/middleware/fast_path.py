"""The direct path: valid table queries answered without FastAPI's per-request machinery.

The event loop and the search worker share one GIL, so every microsecond of Python spent per
request on the loop is one the worker cannot use. Under distinct-vector load, FastAPI's
routing, dependency solving and exception plumbing were about half of the loop's time per
request (py-spy). This middleware, innermost (so access control, admission limits and metrics
still apply), validates the body with the operation's own type and answers it with
operations.respond, exactly as the route would: same validation, same answer, same errors.

Anything it cannot answer as the route would goes on to FastAPI with the body it read: another
content type, malformed JSON, a body that fails validation (FastAPI then writes the 400/422 in
the envelope). The `direct_queries` setting turns it off, for the A/B in BENCHMARKS.md.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.errors import engine_error_response
from service.api.middleware.admission import is_json, replay
from service.engine.errors import EngineError
from service.loading.registry import Registry
from service.operations.catalog import OPERATIONS, Operation, respond
from service.operations.context import Context
from service.operations.limits import Limits
from service.runtime.runtime import Runtime

PREFIX = "/v1/tables/"
JSON_HEADERS = [(b"content-type", b"application/json")]


class DirectQueryMiddleware:
    """Answer valid POST /v1/tables/{table}/{operation} requests through operations.respond."""

    def __init__(self, app: ASGIApp, registry: Registry, limits: Limits, runtime: Runtime) -> None:
        self.app = app
        self.registry = registry
        self.limits = limits
        self.runtime = runtime

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = target_of(scope)
        if target is None:
            await self.app(scope, receive, send)
            return
        table, operation = target
        message = await receive()
        body = None if message.get("more_body") else _validated(operation, message, scope)
        if body is None:
            await self.app(scope, replay(message, receive), send)
            return
        scope["route"] = operation.route
        try:
            context = Context(self.registry.get(table), self.limits, self.runtime, self.registry)
            answer = await respond(operation, body, context)
        except EngineError as error:
            await engine_error_response(error)(scope, receive, send)
            return
        await send_json(send, answer)


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


def _validated(operation: Operation, message: Message, scope: Scope) -> Any:
    """The validated request body, or None to leave the request to FastAPI."""
    if not _json_content(scope):
        return None
    try:
        return operation.body.validate_python(orjson.loads(message.get("body", b"")))
    except (orjson.JSONDecodeError, ValidationError):
        return None


def _json_content(scope: Scope) -> bool:
    for name, value in scope["headers"]:
        if name == b"content-type":
            return is_json(value.decode("latin-1"))
    return False


async def send_json(send: Send, body: bytes) -> None:
    """A 200 answer carrying already serialised JSON."""
    headers = [*JSON_HEADERS, (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})

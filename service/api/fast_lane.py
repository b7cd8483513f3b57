"""Valid neighbour and analogy queries answered without FastAPI's per-request machinery.

The event loop and the search worker share one GIL, so every microsecond of Python spent per
request on the loop is one the worker cannot use. Under distinct-vector load, FastAPI's
routing, dependency solving and exception plumbing were about half of the loop's time per
request (py-spy). This lane, innermost of the middlewares (so access control, admission
limits, metrics and the response cache all still apply), validates the body with the routes'
own pydantic types and answers through the routes' own function, routes_search.answer.

Anything it cannot answer exactly as the route would goes on to FastAPI untouched: another
content type, a body in several messages, malformed JSON, anything that fails validation, an
unknown or loading table. Errors raised while answering use the one error mapping.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import TypeAdapter, ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service import schemas
from service.api.errors import engine_error_response
from service.api.response_cache import answer_bytes, json_content, replay, target_of
from service.api.routes_search import answer
from service.engine.errors import EngineError
from service.engine.registry import Registry, ServedTable

BODIES: dict[str, TypeAdapter[Any]] = {
    "neighbors": TypeAdapter(schemas.NeighborsBody),
    "analogy": TypeAdapter(schemas.AnalogyBody),
}


class FastLaneMiddleware:
    """Answer valid POST /v1/tables/{table}/(neighbors|analogy) requests directly."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = target_of(scope)
        if target is None:
            await self.app(scope, receive, send)
            return
        message = await receive()
        body = None if message.get("more_body") else _parse(target[1], message, scope)
        state = scope["app"].state
        served = None if body is None else _loaded(state.registry, target[0])
        if body is None or served is None:
            await self.app(scope, replay(message, receive), send)
            return
        try:
            content = await answer(body, scope, served, state.settings, state.runtime)
        except EngineError as error:
            await engine_error_response(error)(scope, receive, send)
            return
        await answer_bytes(send, content)


def _loaded(registry: Registry, name: str) -> ServedTable | None:
    """The table if it is loaded; otherwise FastAPI's path reports why not."""
    try:
        return registry.get(name)
    except EngineError:
        return None


def _parse(operation: str, message: Message, scope: Scope) -> Any:
    """The validated request body, or None to leave the request to FastAPI."""
    if not json_content(scope):
        return None
    try:
        return BODIES[operation].validate_python(orjson.loads(message.get("body", b"")))
    except (orjson.JSONDecodeError, ValidationError):
        return None

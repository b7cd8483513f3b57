"""What gets in: body size (counted while it streams), content type, and work in flight.

Both middlewares are plain ASGI, so a refused request costs no routing, parsing or validation,
and the answer is the one error envelope from the one status mapping.
"""

from __future__ import annotations

from fastapi import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.errors import engine_error_response
from service.engine.errors import EngineError
from service.errors import BodyTooLarge, Overloaded, UnsupportedMediaType

# Only table work is bounded: probes, scrapes and admin calls must get through an overload.
BOUNDED_PREFIX = "/v1/tables"


async def refuse(
    error: EngineError, scope: Scope, receive: Receive, send: Send, close: bool = False
) -> None:
    """Answer `error` in the envelope; `close` ends the connection (an unread body follows)."""
    response = engine_error_response(error)
    if close:
        response.headers["Connection"] = "close"
    await response(scope, receive, send)


class InFlightLimitMiddleware:
    """At most `limit` table requests at once; past it, 429 Overloaded with Retry-After."""

    def __init__(self, app: ASGIApp, limit: int, retry_after: int) -> None:
        self.app = app
        self.limit = limit
        self.retry_after = retry_after
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(BOUNDED_PREFIX):
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.limit:
            error = Overloaded("requests in flight", self.limit, self.retry_after)
            await refuse(error, scope, receive, send)
            return
        # One event loop runs every request, so a plain counter is exact.
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


class ClientDisconnected(Exception):
    """The client went away before its whole body arrived."""


class BodyLimitMiddleware:
    """413 for a body above `limit` bytes: at once from Content-Length, else once it streams past.

    The body is read here, counting every chunk, and handed to the app whole; the app would
    read it whole anyway, and a lying or absent Content-Length cannot get more past.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.limit:
            await refuse(BodyTooLarge(self.limit), scope, receive, send, close=True)
            return
        try:
            body = await self._read(receive)
        except ClientDisconnected:
            return  # nobody is left to answer
        if body is None:
            await refuse(BodyTooLarge(self.limit), scope, receive, send, close=True)
            return
        whole = {"type": "http.request", "body": body, "more_body": False}
        await self.app(scope, replay(whole, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or None once it grows past the limit."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise ClientDisconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def replay(message: Message, receive: Receive) -> Receive:
    """A receive that yields a message already taken, then whatever the client sends."""
    pending = True

    async def replayed() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return message
        return await receive()

    return replayed


def is_json(content_type: str) -> bool:
    """application/json or application/<anything>+json, parameters ignored."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


async def require_json(request: Request) -> None:
    """A dependency for routes that take a JSON body: 415 for any other content type."""
    content_type = request.headers.get("content-type", "")
    if not is_json(content_type):
        raise UnsupportedMediaType(content_type)

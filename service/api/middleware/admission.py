"""What gets in: bodies (size, deadline, bytes held at once), content type, work in flight.

Both middlewares are plain ASGI, so a refused request costs no routing, parsing or validation,
and the answer is the one error envelope from the one status mapping. The body is read first:
a request counts as in flight only once its body has arrived.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.engine.errors import EngineError
from service.errors import BodyTooLarge, Overloaded, encode

# Only table work is bounded: probes, scrapes and admin calls must get through an overload.
BOUNDED_PREFIX = "/v1/tables"


async def refuse(
    error: EngineError, scope: Scope, receive: Receive, send: Send, close: bool = False
) -> None:
    """Answer `error` in the envelope; `close` ends the connection (an unread body follows)."""
    encoded = encode(error)
    headers = [*encoded.headers, (b"connection", b"close")] if close else encoded.headers
    await send({"type": "http.response.start", "status": encoded.status, "headers": headers})
    await send({"type": "http.response.body", "body": encoded.body})


class InFlight:
    """Table requests being served: counted once their body has arrived, until they answer.

    Shared by InFlightLimitMiddleware, which counts them, and the connection protocol
    (service/server/connections.py), which refuses a table request at once, without reading
    its body, while the count is at its limit. One event loop runs both, so a plain counter is
    exact.
    """

    def __init__(self, limit: int, retry_after: int) -> None:
        self.limit = limit
        self.retry_after = retry_after
        self.count = 0

    def full(self) -> bool:
        """Whether another table request would go past the limit."""
        return self.count >= self.limit

    def overloaded(self) -> Overloaded:
        """The error a refused request gets."""
        return Overloaded("requests in flight", self.limit, self.retry_after)


class InFlightLimitMiddleware:
    """At most `in_flight.limit` table requests at once; past it, 429 Overloaded."""

    def __init__(self, app: ASGIApp, in_flight: InFlight) -> None:
        self.app = app
        self.in_flight = in_flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(BOUNDED_PREFIX):
            await self.app(scope, receive, send)
            return
        if self.in_flight.full():
            await refuse(self.in_flight.overloaded(), scope, receive, send)
            return
        self.in_flight.count += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight.count -= 1


class ClientDisconnected(Exception):
    """The client went away before its whole body arrived."""


@dataclass(frozen=True)
class BodyRules:
    """How bodies are read: the largest, and the bytes held at once across requests."""

    limit: int
    budget: int
    retry_after: int


class BodyMiddleware:
    """Reads every body whole before the app sees it, within two bounds, each refused in the
    envelope with the connection closed: 413 past `limit` bytes (at once from Content-Length,
    else once it streams past), and 429 when the bodies held at once (read or being answered)
    would pass `budget` bytes. The deadline for a body to arrive is the connection's
    (service/server/connections.py: 408 and close), which costs no timer when it arrives with
    the head.

    The app would read the body whole anyway; a lying or absent Content-Length cannot get more
    past, and a client that sends its body slowly holds no in-flight slot (that comes after).
    """

    def __init__(self, app: ASGIApp, rules: BodyRules) -> None:
        self.app = app
        self.rules = rules
        self.held = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.rules.limit:
            await refuse(BodyTooLarge(self.rules.limit), scope, receive, send, close=True)
            return
        reserved = [0]  # grown while the body streams in, released once answered
        try:
            body = await self._read(receive, declared or 0, reserved)
        except ClientDisconnected:
            self._release(reserved)
            return  # nobody is left to answer
        except EngineError as error:
            self._release(reserved)
            await refuse(error, scope, receive, send, close=True)
            return
        whole = {"type": "http.request", "body": body, "more_body": False}
        try:
            await self.app(scope, replay(whole, receive), send)
        finally:
            self._release(reserved)

    async def _read(self, receive: Receive, declared: int, reserved: list[int]) -> bytes:
        """The whole body; BodyTooLarge or Overloaded past a bound."""
        self._reserve(declared, reserved)
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise ClientDisconnected
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.rules.limit:
                raise BodyTooLarge(self.rules.limit)
            self._reserve(size, reserved)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def _reserve(self, size: int, reserved: list[int]) -> None:
        """Hold `size` bytes for this body (what it already holds counts); Overloaded if the
        budget cannot. An empty budget admits any one body, so no allowed body is refused."""
        more = size - reserved[0]
        if more <= 0:
            return
        if self.held and self.held + more > self.rules.budget:
            what = "request bodies held at once (bytes)"
            raise Overloaded(what, self.rules.budget, self.rules.retry_after)
        self.held += more
        reserved[0] = size

    def _release(self, reserved: list[int]) -> None:
        self.held -= reserved[0]
        reserved[0] = 0


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

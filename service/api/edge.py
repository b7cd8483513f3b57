"""The edge: everything a request meets before the app, in one plain ASGI middleware.

In this order, each refusal answered in the one error envelope (service/errors.py `encode`):

1. **Metrics**: latency and count by route template and method (never the raw path, never a
   method the route does not take: those are one "unmatched" route with method "other"),
   refusals included; probes and scrapes are not measured.
2. **Access**: the API or admin key a path needs (service/api/keys.py), compared in constant
   time; 401 with a challenge without it.
3. **The body**, read whole before anything else sees it, and only on a route that takes one:
   elsewhere the request is answered as if it had none, unread, and the connection closed.
   Two bounds, each refused with the connection closed: 413 past `max_body_bytes` (at once
   from Content-Length, else once it streams past), and 429 when the bytes of bodies held at
   once (received, or being answered) would pass `max_body_bytes_in_flight`: bytes that
   arrived, never a declared length, so idle sockets declaring large bodies reserve nothing.
   The deadline and minimum rate for a body to arrive are the connection's
   (service/server/protocol.py: 408 and close). A lying or absent Content-Length cannot get
   more past, and a client that sends its body slowly holds no in-flight slot (that comes after).
   A refusal before the body is read (401, 413) closes the connection: a body still coming
   is never read after its answer.
4. **In flight**: at most `max_in_flight` table requests at once, and at most
   `max_in_flight_per_key` of one API key, counted once their body has arrived; past either,
   429 (the connection protocol refuses them earlier still, unread). An
   analysis (an operation with a `queue`) is first admitted by its own queue, else answered
   429 before it takes a slot (runtime/analyses.py), and is cancelled if its client leaves.
5. **The door**: a POST /v1/tables/{table}/{operation} goes straight to operations.door.answer,
   the function the FastAPI route calls too (the same parsing, validation, answer and errors,
   by construction) without routing and dependency solving, and a text embedding (POST
   /v1/embeddings, /embed) to operations.embedding.answer likewise; `direct_queries = false`
   sends them through the routes instead. Anything else goes on to the FastAPI app.

Why one middleware and not five stacked: the event loop and the search worker share one GIL,
so every microsecond of Python per request on the loop is one the worker cannot use. Stacked,
each layer cost a coroutine, and the metrics a wrapped `send` and the body a replaying
`receive` on every request, the fast path's too (BENCHMARKS.md, "The request path": the A/B
of this change).
A refused request costs no routing, parsing or validation.
"""

from __future__ import annotations

import hmac
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import anyio
from starlette.routing import compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.keys import ADMIN_PREFIX, METRICS_PATH, OPEN_PATHS, KeyRing
from service.engine.errors import EngineError
from service.errors import BodyTooLarge, Overloaded, Unauthorized, encode
from service.explorer import is_page_path
from service.metrics import IN_FLIGHT, REQUEST_SECONDS, REQUESTS
from service.operations import embedding
from service.operations.catalog import OPERATIONS, Operation
from service.operations.door import Services, answer
from service.runtime.analyses import AnalysisQueue
from service.runtime.batching import InFlight

# Table requests: the only work bounded in flight (probes, scrapes and admin calls must get
# through an overload), never a page, never open when keys are configured. Text embeddings
# name their table in the body, and are table requests too.
BOUNDED_PREFIX = "/v1/tables"
EMBEDDING_PATHS = frozenset(embedding.PATHS)
TABLES_PREFIX = "/v1/tables/"
# Probes and scrapes would drown the latency of real traffic; they are not measured.
UNMEASURED_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
# Methods whose requests may carry a body a route reads.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# The labels of a request no route takes: one series for every path and method of them.
UNMATCHED = ("unmatched", "other")


@dataclass(frozen=True)
class Route:
    """A route's path template, the pattern matching its paths, and the methods it takes."""

    template: str
    pattern: re.Pattern[str]
    methods: frozenset[str]


@dataclass(frozen=True)
class BodyRules:
    """How bodies are read: the largest, and the bytes held at once across requests."""

    limit: int
    budget: int
    retry_after: int


class ClientDisconnected(Exception):
    """The client went away before its whole body arrived."""


class Edge:
    """Metrics, access, the body, in flight and the door, in that order (module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        keys: KeyRing,
        metrics_require_key: bool,
        rules: BodyRules,
        in_flight: InFlight,
        routes: dict[str, frozenset[str]],
        services: Services | None,
        queues: Mapping[str, AnalysisQueue],
    ) -> None:
        self.app = app
        self.keys = keys
        self.metrics_require_key = metrics_require_key
        self.rules = rules
        self.in_flight = in_flight
        # None: `direct_queries` is off, every request goes on to the app.
        self.services = services
        # For metrics labels and for which requests may have their body read.
        self.routes = compiled_routes(routes)
        # The analyses' queues by kind (Operation.queue).
        self.queues = queues
        # (template, method, status class) -> the labelled histogram and counter: labels()
        # costs microseconds per call, on every request.
        self.children: dict[tuple[str, str, str], tuple[Any, Any]] = {}
        # Body bytes held at once, by requests being read or answered.
        self.held = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        # The status sent; stays 499 (nginx's "client closed request") only if the client left
        # before an answer (or the app raised before answering: the server answers 500 then).
        status = [499]
        if scope["path"] in UNMEASURED_PATHS:
            await self._admit(scope, receive, send, status)
            return
        started = time.perf_counter()
        IN_FLIGHT.inc()
        try:
            await self._admit(scope, receive, send, status)
        finally:
            IN_FLIGHT.dec()
            self._observe(scope, status[0], time.perf_counter() - started)

    async def _admit(self, scope: Scope, receive: Receive, send: Send, status: list[int]) -> None:
        """Access, the body, in flight, then the door or the app; `status[0]` what was sent."""
        path: str = scope["path"]
        admin = path.startswith(ADMIN_PREFIX)
        needed = self.required_keys(path, admin)
        pending = has_body(scope)
        key = None  # the key the request was let in with, which its in-flight share counts
        if needed:
            key = bearer_token(scope)
            if key is None or not matches(key, needed):
                error = Unauthorized(key is not None, admin)
                status[0] = await refuse(error, send, close=pending)
                return
        if pending and not self.takes_body(scope):
            await self._to_app(scope, b"", receive, closing(send), status)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.rules.limit:
            status[0] = await refuse(BodyTooLarge(self.rules.limit), send, close=True)
            return
        reserved = [0]  # grown while the body streams in, released once answered
        try:
            try:
                body = await self._read(receive, reserved)
            except ClientDisconnected:
                return  # nobody is left to answer
            except EngineError as error:
                status[0] = await refuse(error, send, close=True)
                return
            if not bounded(path):
                await self._dispatch(None, scope, body, receive, send, status)
                return
            target = target_of(scope)
            queue = None if target is None else self.queue_of(target[1])
            if queue is not None and queue.admitted.full():  # an analysis: its own bound first
                status[0] = await refuse(queue.admitted.overloaded(), send)
                return
            refusal = self.in_flight.refusal(key)
            if refusal is not None:
                status[0] = await refuse(refusal, send)
                return
            self.in_flight.take(key)
            try:
                if queue is None:
                    await self._dispatch(target, scope, body, receive, send, status)
                else:
                    dispatch = partial(self._dispatch, target, scope, body, receive, send, status)
                    await analyse(queue, dispatch, receive)
            finally:
                self.in_flight.give_back(key)
        finally:
            self.held -= reserved[0]

    def queue_of(self, operation: Operation) -> AnalysisQueue | None:
        """The queue an analysis waits in; None for a query."""
        return None if operation.queue is None else self.queues[operation.queue]

    async def _dispatch(
        self,
        target: tuple[str | None, Operation] | None,
        scope: Scope,
        body: bytes,
        receive: Receive,
        send: Send,
        status: list[int],
    ) -> None:
        """A query (`target`: its table and operation) to the door when `direct_queries` is on;
        anything else to the app."""
        services = self.services
        if services is None or target is None:
            await self._to_app(scope, body, receive, send, status)
            return
        table, operation = target
        if table is None:  # a text embedding: its table is named in the body
            scope["route"] = embedding.ROUTES[scope["path"]]
            encoded = await embedding.answer(operation, body, content_type(scope), services)
        else:
            scope["route"] = operation.route
            encoded = await answer(operation, table, body, content_type(scope), services)
        status[0] = encoded.status
        await send({"type": "http.response.start", "status": encoded.status,
                    "headers": encoded.headers})  # fmt: skip
        await send({"type": "http.response.body", "body": encoded.body})

    async def _to_app(
        self, scope: Scope, body: bytes, receive: Receive, send: Send, status: list[int]
    ) -> None:
        """The FastAPI app, given the body already read and a `send` that notes the status."""

        async def send_with_status(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        whole = {"type": "http.request", "body": body, "more_body": False}
        await self.app(scope, replay(whole, receive), send_with_status)

    def required_keys(self, path: str, admin: bool) -> tuple[bytes, ...]:
        """The keys that open `path`; empty when it is open."""
        if not path.startswith(TABLES_PREFIX) and (path in OPEN_PATHS or is_page_path(path)):
            return ()
        if path == METRICS_PATH and not self.metrics_require_key:
            return ()
        if admin:
            # Without an admin key the admin routes are not mounted: the answer is a 404.
            return self.keys.admin
        if not self.keys.api:
            return ()
        return self.keys.api + self.keys.admin

    async def _read(self, receive: Receive, reserved: list[int]) -> bytes:
        """The whole body; BodyTooLarge or Overloaded past a bound."""
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

    def takes_body(self, scope: Scope) -> bool:
        """Whether a route takes this request's method with a body (a query always does)."""
        if target_of(scope) is not None:
            return True
        return scope["method"] in BODY_METHODS and labels_of(scope, self.routes) != UNMATCHED

    def _observe(self, scope: Scope, status: int, seconds: float) -> None:
        labels = (*labels_of(scope, self.routes), f"{status // 100}xx")
        children = self.children.get(labels)
        if children is None:
            children = REQUEST_SECONDS.labels(*labels), REQUESTS.labels(*labels)
            self.children[labels] = children
        children[0].observe(seconds)
        children[1].inc()


async def refuse(error: EngineError, send: Send, close: bool = False) -> int:
    """Answer `error` in the envelope; `close` ends the connection (an unread body follows).
    Returns the status sent."""
    encoded = encode(error)
    headers = [*encoded.headers, (b"connection", b"close")] if close else encoded.headers
    await send({"type": "http.response.start", "status": encoded.status, "headers": headers})
    await send({"type": "http.response.body", "body": encoded.body})
    return encoded.status


def closing(send: Send) -> Send:
    """A `send` whose answer closes the connection (a body sent with the request is unread)."""

    async def send_closing(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [*message.get("headers", ()), (b"connection", b"close")]
            message = {**message, "headers": headers}
        await send(message)

    return send_closing


def has_body(scope: Scope) -> bool:
    """Whether the request declares a body: a Content-Length above 0, or chunked."""
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            return value.strip() not in (b"0", b"")
        if name == b"transfer-encoding":
            return True
    return False


async def analyse(
    queue: AnalysisQueue, work: Callable[[], Awaitable[None]], receive: Receive
) -> None:
    """`work()`, an analysis: counted in its queue's bound, and cancelled if the client
    disconnects first. Its body has been read, so the next message is the disconnect; the
    watch costs a task, which only analyses pay."""
    queue.admitted.count += 1
    try:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                group.cancel_scope.cancel()

            group.start_soon(watch)
            await work()
            group.cancel_scope.cancel()
    finally:
        queue.admitted.count -= 1


def bounded(path: str) -> bool:
    """Whether a request to `path` is a table request, counted and bounded in flight."""
    return path.startswith(BOUNDED_PREFIX) or path in EMBEDDING_PATHS


def matches(presented: bytes, keys: tuple[bytes, ...]) -> bool:
    """Whether `presented` is one of `keys`; every key is compared, each in constant time."""
    found = False
    for key in keys:
        found |= hmac.compare_digest(presented, key)
    return found


def bearer_token(scope: Scope) -> bytes | None:
    """The token of an 'Authorization: Bearer <token>' header, if there is one."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            scheme, _, token = value.partition(b" ")
            if scheme.lower() == b"bearer" and token.strip():
                return token.strip()
            return b""
    return None


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def content_type(scope: Scope) -> str:
    """The request's Content-Type ('' when it has none)."""
    for name, value in scope["headers"]:
        if name == b"content-type":
            return str(value.decode("latin-1"))
    return ""


def target_of(scope: Scope) -> tuple[str | None, Operation] | None:
    """(table, operation) for a POST to a query route; (None, operation) for a text
    embedding's, whose table is named in its body."""
    if scope["method"] != "POST":
        return None
    path: str = scope["path"]
    if path in EMBEDDING_PATHS:
        return None, embedding.PATHS[path]
    if not path.startswith(TABLES_PREFIX):
        return None
    parts = path[len(TABLES_PREFIX) :].split("/")
    if len(parts) != 2 or parts[1] not in OPERATIONS:
        return None
    return parts[0], OPERATIONS[parts[1]]


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


def compiled_routes(routes: dict[str, frozenset[str]]) -> list[Route]:
    """Route templates and their methods, with the regular expressions matching their paths."""
    return [Route(path, compile_path(path)[0], methods) for path, methods in routes.items()]


def labels_of(scope: Scope, routes: list[Route]) -> tuple[str, str]:
    """(route template, method) for metrics, e.g. ('/v1/tables/{table}/neighbors', 'POST'); a
    path no route matches, or a method its route does not take, is UNMATCHED."""
    path, method = scope["path"], scope["method"]
    matched = scope.get("route")  # set by routing, or by the door for a query
    if matched is not None and hasattr(matched, "path"):
        taken = method in (getattr(matched, "methods", None) or ())
        return (str(matched.path), method) if taken else UNMATCHED
    for route in routes:
        if route.pattern.match(path):
            return (route.template, method) if method in route.methods else UNMATCHED
    return UNMATCHED

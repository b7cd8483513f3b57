"""Connection guards below the ASGI app: bounded request heads, a head deadline, a bound on open
connections, and a cheap refusal of table requests while the server is at its in-flight limit.

uvicorn's httptools protocol reads a request head of any size, keeps a connection that never
completes a head open forever, and accepts connections until the process runs out of file
descriptors, after which every new connection (health probes included) is refused. Under a
flood, refusing each request through the whole middleware stack took most of the one event
loop's time. GuardedProtocol adds, per connection:

- a head larger than `max_header_bytes` gets 431 and the connection is closed;
- a head not complete within `header_timeout` (from the connection's opening, or from the first
  byte of its next request) closes the connection, with 408 if part of a head arrived;
- past `max_connections` open connections, a new one closes the connection that has waited
  longest for a request head (idle or half-open), or itself when every one has a request in
  progress: the process never runs out of descriptors, and probes keep getting in;
- a table request that arrives while the in-flight count is at its limit is answered 429 at
  once by a tiny ASGI app (no middleware, no body read), and still counted in the metrics.
"""

from __future__ import annotations

import asyncio
import resource
import time
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import orjson
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service import metrics
from service.api.admission import BOUNDED_PREFIX, InFlight
from service.api.errors import headers_of, status_of
from service.api.http_metrics import compiled_templates, template_of
from service.config import Settings
from service.engine.errors import EngineError
from service.errors import HeadersTooLarge, HeadTimeout

# Descriptors kept free for everything else the process opens (tables, logs, epoll, pipes).
RESERVED_DESCRIPTORS = 128


@dataclass
class ConnectionGuard:
    """The bounds every connection of one server shares, and the in-flight count it sheds by."""

    max_header_bytes: int
    header_timeout: float
    max_connections: int
    in_flight: InFlight
    templates: list[Any]

    @classmethod
    def from_settings(cls, settings: Settings, state: Any) -> ConnectionGuard:
        """The guard of an app created by service.main.create_app."""
        return cls(
            max_header_bytes=settings.max_header_bytes,
            header_timeout=settings.header_timeout_seconds,
            max_connections=settings.max_connections or default_max_connections(),
            in_flight=state.in_flight,
            templates=compiled_templates(state.route_templates),
        )

    def protocol(self) -> type[GuardedProtocol]:
        """A protocol class for uvicorn.Config(http=...) bound to this guard."""
        return type("GuardedProtocol", (GuardedProtocol,), {"guard": self})


def default_max_connections() -> int:
    """The open-file limit less what the process needs for itself (at least 16)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 65_536
    return max(16, soft - RESERVED_DESCRIPTORS)


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the guards of the module docstring."""

    guard: ConnectionGuard

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start waiting for the first head; make room when at the connection bound."""
        super().connection_made(transport)
        self.head_bytes = 0
        self.waiting_since: float | None = None
        self.head_timer: asyncio.TimerHandle | None = None
        self._await_head()
        if len(self.connections) > self.guard.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget the head deadline with the connection."""
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Count the head's bytes; 431 once a head grows past the limit."""
        if self.waiting_since is not None:
            self.head_bytes += len(data)
        super().data_received(data)
        too_large = self.head_bytes > self.guard.max_header_bytes
        if self.waiting_since is not None and too_large and not self.transport.is_closing():
            metrics.CONNECTIONS_CLOSED.labels("headers_too_large").inc()
            self._refuse(HeadersTooLarge(self.guard.max_header_bytes))

    def on_message_begin(self) -> None:
        """A new request starts: its head must be complete within the deadline."""
        super().on_message_begin()
        if self.waiting_since is None:
            self._await_head()

    def on_headers_complete(self) -> None:
        """The head is in: no deadline for it any more (the body has its own, in the app)."""
        self.waiting_since = None
        self._stop_head_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        """The request is in; the next head is counted from its first byte."""
        super().on_message_complete()
        self.head_bytes = 0

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        """Run the app, or the cheap 429 when a table request finds the in-flight limit full."""
        path: str = cycle.scope.get("path", "")
        if path.startswith(BOUNDED_PREFIX) and self.guard.in_flight.full():
            app = self._shed
        super()._start_asgi_task(cycle, app)

    async def _shed(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        error = self.guard.in_flight.overloaded()
        status, headers, body = _encoded(error)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})
        route = template_of(scope["path"], self.guard.templates)
        labels = (route, scope["method"], f"{status // 100}xx")
        metrics.REQUEST_SECONDS.labels(*labels).observe(time.perf_counter() - started)
        metrics.REQUESTS.labels(*labels).inc()
        metrics.ERRORS.labels(error.type).inc()

    def _await_head(self) -> None:
        self.head_bytes = 0
        self.waiting_since = time.monotonic()
        self._stop_head_timer()
        self.head_timer = self.loop.call_later(self.guard.header_timeout, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _head_timed_out(self) -> None:
        self.head_timer = None
        if self.transport.is_closing() or self.waiting_since is None:
            return
        metrics.CONNECTIONS_CLOSED.labels("header_timeout").inc()
        if self.head_bytes:
            self._refuse(HeadTimeout(self.guard.header_timeout))
        else:
            self.transport.close()

    def _make_room(self) -> None:
        """Close the connection waiting longest for a head; this one if none is waiting."""
        waiting = [
            connection
            for connection in self.connections
            if isinstance(connection, GuardedProtocol)
            and connection is not self
            and connection.waiting_since is not None
        ]
        victim = min(waiting, key=lambda c: c.waiting_since or 0.0) if waiting else self
        metrics.CONNECTIONS_CLOSED.labels("connection_limit").inc()
        victim.transport.close()

    def _refuse(self, error: EngineError) -> None:
        """Answer `error` in the envelope and close the connection, outside any request."""
        status, headers, body = _encoded(error)
        lines = [b"HTTP/1.1 %d %s\r\n" % (status, HTTPStatus(status).phrase.encode())]
        lines += [name + b": " + value + b"\r\n" for name, value in headers]
        self.transport.write(b"".join([*lines, b"connection: close\r\n\r\n", body]))
        self.transport.close()
        metrics.ERRORS.labels(error.type).inc()
        self.waiting_since = None
        self._stop_head_timer()


def _encoded(error: EngineError) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """(status, headers, body) of the error envelope for `error`."""
    body = orjson.dumps({"error": {"type": error.type, "message": error.message, **error.details}})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    extra = headers_of(error) or {}
    headers += [(name.lower().encode(), value.encode()) for name, value in extra.items()]
    return status_of(error), headers, body

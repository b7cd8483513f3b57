"""The connections of one server: accepted a burst at a time, read by a guarded protocol.

Connection guards below the ASGI app: bounded request heads, head and body deadlines, a bound
on open connections, clients that never read, and cheap refusals at the in-flight limit.

uvicorn's httptools protocol reads a request head of any size, keeps a connection that never
completes a head or a body open forever, and accepts connections until the process runs out of
file descriptors, after which every new connection (health probes included) is refused. Under
a flood, refusing each request through the whole middleware stack took most of the one event
loop's time. GuardedProtocol adds, per connection:

- a head larger than `max_header_bytes` gets 431 and the connection is closed;
- a head not complete within `header_timeout` of the connection opening (or of its previous
  answer) closes the connection, with 408 if part of a head arrived; a body not complete within
  `body_timeout` of its head, or arriving slower than `min_body_bytes_per_second` once
  BODY_GRACE_SECONDS have passed, gets 408 and the connection is closed. Deadlines are
  timestamps checked by the guard's one sweep (ConnectionGuard), so a request costs no timer;
- past `max_connections` open connections, a new one closes the connection idle or waiting
  longest for a head, else the slowest of the oldest bodies still arriving, or itself when
  every one has a request whole: the process never runs out of descriptors, and probes keep
  getting in however many idle, half-open or bodiless connections a client opens;
- at most `max_pipelined` requests wait behind the one being answered: a read is parsed in
  pieces, and past the bound the rest is kept unparsed and the connection not read until the
  queue drains (httptools parses whatever it is given: one read of tiny pipelined requests
  queued thousands, and uvicorn resumes reading after every answer);
- an answer that closes the connection while the request's body is still coming (a 401 or
  413 before the body is read) is followed by a lingering close: the server half-closes and
  drops, unparsed, what else arrives for up to LINGER_SECONDS and max_body_bytes, so the
  client can read its answer instead of losing it to a reset, and an endless body costs one
  call a read, for that long only;
- a client that does not read its answers (its write buffer stays above asyncio's high-water
  mark) is cut off after `send_timeout`, and past `max_stalled` such connections the one
  stalled longest is cut off at once: answers buffered for clients that never read stay bounded;
- a table request that arrives while the in-flight count is at its limit is answered 429 at
  once by a tiny ASGI app (no middleware, no body read), and still counted in the metrics; its
  connection is then not read for the Retry-After it was given. A client that honours
  Retry-After loses nothing; one that resends at once (wrk does) no longer makes the server
  spend its CPU refusing thousands of requests a second instead of answering the admitted ones.

Accepting: at most ACCEPT_BURST connections a turn, on either loop (the `event_loop` setting):
BurstServer on uvloop (the default), BoundedAcceptLoop on asyncio's selector loop. Left to
themselves, measured under loadtests.overload and loadtests.attack (BENCHMARKS.md):
- uvloop (libuv) accepted one connection per poll event, so while the loop was busy answering a
  flood it accepted about 20 connections a second, and a client opening a new connection (a
  health probe) waited seconds in the kernel's accept queue;
- asyncio accepts up to the listen backlog (uvicorn: 2,048) per event before any connection is
  set up, so 2,000 half-open connections against 1,024 descriptors ran it out of descriptors,
  and on EMFILE asyncio stops accepting for a whole second.
Capping each turn's accepts below the descriptors kept free (RESERVED_DESCRIPTORS) lets the
connection bound close old connections as fast as new ones come, without ever running out. The
listening socket stays ready, so the next turn accepts the next ones. With the cap both loops
held the same flood alike (2026-12-04: 2,048 connections, accepted 52-56% of capacity on each);
uvloop answers more for less CPU, so it is the default.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import logging
import os
import resource
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, cast

import uvloop
from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service import metrics
from service.api.edge import Route, bounded, compiled_routes, labels_of
from service.config import Settings
from service.engine.errors import EngineError
from service.errors import (
    BodyTimeout,
    BodyTooSlow,
    Encoded,
    FramingTooLarge,
    HeadersTooLarge,
    HeadTimeout,
    TrailersRefused,
    encode,
)
from service.runtime.batching import InFlight

LOGGER = logging.getLogger("service.server.connections")
# Descriptors kept free beyond those open at start: room for connections being accepted and
# closed (ACCEPT_BURST a turn, a few turns in flight) and files a reload opens.
RESERVED_DESCRIPTORS = 128
# How often deadlines are checked: a deadline may be overrun by up to this much.
SWEEP_SECONDS = 0.5
# How long a body may take before its rate counts (a head sent apart from its body, say).
BODY_GRACE_SECONDS = 2.0
# How long a connection closed with its request's body still coming drains it (see above).
LINGER_SECONDS = 2.0
# When room is needed, the slowest of this many bodies arriving longest is closed: choosing
# by rate, without scanning every connection.
EVICTION_CANDIDATES = 32


@dataclass
class ConnectionGuard:
    """The bounds every connection of one server shares, and the in-flight count it sheds by."""

    max_header_bytes: int
    header_timeout_seconds: float
    body_timeout_seconds: float
    min_body_rate: int
    max_connections: int
    send_timeout_seconds: float
    max_stalled_connections: int
    max_pipelined: int
    max_body_bytes: int
    in_flight: InFlight
    routes: list[Route]
    stalled: dict[Any, float] = field(default_factory=dict)
    # Connections waiting for a head, oldest first (the first to close when room is needed).
    waiting: dict[Any, None] = field(default_factory=dict)
    # Connections whose request body is arriving, oldest first (the next to close).
    arriving: dict[Any, None] = field(default_factory=dict)
    sweeping: bool = False

    @classmethod
    def from_settings(cls, settings: Settings, state: Any) -> ConnectionGuard:
        """The guard of an app created by service.api.app.create_app."""
        guard = cls(
            max_header_bytes=settings.max_header_bytes,
            header_timeout_seconds=settings.header_timeout_seconds,
            body_timeout_seconds=settings.body_timeout_seconds,
            min_body_rate=settings.min_body_bytes_per_second,
            max_connections=settings.max_connections or default_max_connections(),
            send_timeout_seconds=settings.send_timeout_seconds,
            max_stalled_connections=settings.max_stalled_connections,
            max_pipelined=settings.max_pipelined_requests,
            max_body_bytes=settings.max_body_bytes,
            in_flight=state.in_flight,
            routes=compiled_routes(state.routes),
        )
        LOGGER.info("at most %d connections open at once", guard.max_connections)
        return guard

    def watch(self, connections: set[Any], loop: asyncio.AbstractEventLoop) -> None:
        """Start the deadline sweep over `connections` (once; later calls do nothing)."""
        if not self.sweeping:
            self.sweeping = True
            loop.call_later(SWEEP_SECONDS, self._sweep, connections, loop)

    def _sweep(self, connections: set[Any], loop: asyncio.AbstractEventLoop) -> None:
        now = time.monotonic()
        for connection in list(connections):
            check = getattr(connection, "check_deadlines", None)
            if check is not None:
                check(now)
        loop.call_later(SWEEP_SECONDS, self._sweep, connections, loop)


def default_max_connections() -> int:
    """The open-file limit less the descriptors open now and a reserve (at least 16)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 65_536
    return max(16, soft - open_descriptors() - RESERVED_DESCRIPTORS)


def open_descriptors() -> int:
    """Descriptors this process has open (thread pools, pipes, logs, the listening socket)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return 64


# Connections accepted per loop turn. asyncio sets an accepted socket up a turn later, and a
# connection closed to make room frees its descriptor a turn after that: two bursts plus the
# process's own files must fit in RESERVED_DESCRIPTORS (128).
ACCEPT_BURST = 16
# After running out of descriptors (or memory), accepting pauses this long (asyncio's delay).
ACCEPT_RETRY_SECONDS = 1.0
# uvicorn's `loop` setting takes an import string of a loop factory: these classes.
FACTORIES = {
    "asyncio": "service.server.connections:BoundedAcceptLoop",
    "uvloop": "service.server.connections:BoundedAcceptUVLoop",
}


class BoundedAcceptLoop(asyncio.SelectorEventLoop):
    """asyncio's selector event loop with the accept burst capped (see Accepting above)."""

    def _accept_connection(
        self,
        protocol_factory: Any,
        sock: socket.socket,
        sslcontext: Any = None,
        server: Any = None,
        backlog: int = 100,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        burst = min(backlog, ACCEPT_BURST)
        super()._accept_connection(  # type: ignore[misc]
            protocol_factory, sock, sslcontext, server, burst, *args, **kwargs
        )


class BoundedAcceptUVLoop(uvloop.Loop):
    """uvloop's loop, its listening socket accepted by BurstServer instead of by libuv."""

    async def create_server(
        self, protocol_factory: Any, *args: Any, sock: socket.socket | None = None,
        ssl: Any = None, backlog: int = 100, **kwargs: Any,
    ) -> Any:  # fmt: skip
        """A BurstServer for the socket uvicorn hands over (the only way serve.py starts it);
        uvloop's own server otherwise."""
        if sock is None or ssl is not None or args:
            return await super().create_server(
                protocol_factory, *args, sock=sock, ssl=ssl, backlog=backlog, **kwargs
            )
        return BurstServer(self, protocol_factory, sock, backlog)


class BurstServer:
    """A listening socket on uvloop, at most ACCEPT_BURST connections accepted a turn, each
    handed to uvloop as an accepted socket (its transport is uvloop's, as with libuv's accept).

    What BoundedAcceptLoop does for asyncio's loop, with asyncio's own handling of the accept
    errors: out of descriptors or memory, accepting pauses for ACCEPT_RETRY_SECONDS. Only what
    uvicorn uses of an asyncio.Server: close() and wait_closed().
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, protocol_factory: Any, sock: socket.socket,
        backlog: int,
    ) -> None:  # fmt: skip
        self.loop = loop
        self.protocol_factory = protocol_factory
        self.sock = sock
        self.burst = min(backlog, ACCEPT_BURST)
        self.closed = False
        self.connecting: set[asyncio.Task[Any]] = set()
        sock.setblocking(False)
        sock.listen(backlog)
        loop.add_reader(sock.fileno(), self.accept)

    def accept(self) -> None:
        """Up to `burst` waiting connections, each set up as its own task."""
        for _ in range(self.burst):
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return
            except OSError as error:
                if error.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    raise  # the loop logs it and keeps running
                LOGGER.warning("accepting paused for %.0f s: %s", ACCEPT_RETRY_SECONDS, error)
                self.loop.remove_reader(self.sock.fileno())
                self.loop.call_later(ACCEPT_RETRY_SECONDS, self.resume)
                return
            task = self.loop.create_task(self.connect(conn))
            self.connecting.add(task)
            task.add_done_callback(self.connecting.discard)

    def resume(self) -> None:
        """Accept again after a pause, unless closed meanwhile."""
        if not self.closed:
            self.loop.add_reader(self.sock.fileno(), self.accept)

    async def connect(self, conn: socket.socket) -> None:
        """One accepted socket, with its protocol, on uvloop's transport."""
        try:
            await self.loop.connect_accepted_socket(self.protocol_factory, conn)
        except OSError as error:
            LOGGER.debug("a connection failed while it was set up: %s", error)
            conn.close()

    def close(self) -> None:
        """Stop accepting and close the listening socket (asyncio.Server.close's way)."""
        if self.closed:
            return
        self.closed = True
        self.loop.remove_reader(self.sock.fileno())
        self.sock.close()

    async def wait_closed(self) -> None:
        """Connections being set up when the server closed have been."""
        if self.connecting:
            await asyncio.gather(*self.connecting, return_exceptions=True)


def protocol_for(guard: ConnectionGuard) -> type[GuardedProtocol]:
    """A protocol class for uvicorn.Config(http=...) bound to `guard`."""
    return type("GuardedProtocol", (GuardedProtocol,), {"guard": guard})


# Bytes of a request that no parser callback reports: its method, version, spaces and line ends
# (a method of up to 20 letters). Where a request began in a read is estimated from what the
# callbacks reported before it plus this per earlier request: at or after where it did begin
# (its head counted short by at most this much per earlier request in the read, so honest
# pipelining is never refused), unless an earlier request's chunk-size lines sat in the read.
REQUEST_LINE_ALLOWANCE = 40
# A read is parsed this many bytes at a time, twice as many after each piece that queued no
# request: httptools parses all it is given, so a read of tiny pipelined requests parsed whole
# would queue thousands at once; in pieces it stops within one piece of max_pipelined.
FIRST_PIECE = 2048


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the guards of the module docstring."""

    guard: ConnectionGuard
    flow: HeldFlow
    # When this connection started waiting for a head (opened, or answered its last request);
    # None while a request is read or answered. Set through wait() and stop_waiting(), which
    # keep guard.waiting in the same order.
    waiting_since: float | None = None
    deferred: Any = None  # a pipelined request held while the client does not read
    # When the head of a request whose body has not all arrived was complete.
    body_since: float | None = None
    # The request being read: its bytes that are not body (head, chunk-size lines, trailers),
    # counted per read; its head counted exactly by the parser's callbacks; its body's size.
    framing = 0
    head_size = 0
    body_size = 0
    in_head = False  # between its first byte and the end of its head
    trailers = False  # it sent header fields after its body
    began_in_read = False
    ended_in_read = False
    body_in_read = 0
    # Bytes of this read the parser's callbacks reported (plus an allowance per request for its
    # request line and blank line), and that count when the request being read began.
    reported_in_read = 0
    begun_at = 0
    send_timer: asyncio.TimerHandle | None = None
    running: Any = None  # the request cycle being answered
    # Bytes read past the bound on queued requests, parsed once the queue has drained.
    unparsed = b""
    # Lingering after a close with the body still coming: until when, and what was dropped.
    lingering_until: float | None = None
    lingered = 0
    shed = False  # the request being answered was refused at the in-flight limit

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start waiting for the first head; make room when at the connection bound."""
        super().connection_made(CoalescedWrites(transport, self.loop, self._linger))  # type: ignore[arg-type]
        self.flow = HeldFlow(self.transport)
        self.wait()
        self.guard.watch(self.connections, self.loop)
        if len(self.connections) > self.guard.max_connections:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        """Forget any stall or wait with the connection."""
        self._unstall()
        self.stop_waiting()
        self.guard.arriving.pop(self, None)
        self.deferred = None
        self.unparsed = b""
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Parse `data` in pieces; past max_pipelined queued requests, keep the rest unparsed
        and stop reading until the queue drains (on_response_complete)."""
        if self.lingering_until is not None:
            self.lingered += len(data)
            if self.lingered > self.guard.max_body_bytes:
                self.abort()
            return
        piece_size = FIRST_PIECE
        while data and not self.transport.is_closing():
            piece, data = data[:piece_size], data[piece_size:]
            queued = len(self.pipeline)
            self._parse(piece)
            if data and len(self.pipeline) >= self.guard.max_pipelined:
                self.unparsed = data
                self.flow.hold()
                return
            piece_size = FIRST_PIECE if len(self.pipeline) > queued else 2 * piece_size
        self.flow.release()

    def _parse(self, data: bytes) -> None:
        """Count the bytes that are not body; refuse a request whose head, chunk framing or
        trailers outgrow their bounds (every request, pipelined ones included)."""
        self.began_in_read = self.ended_in_read = False
        self.body_in_read = self.reported_in_read = 0
        super().data_received(data)
        if not self.began_in_read and not self.ended_in_read:
            # A read that ended a request (and began none) holds that request's last bytes:
            # counting them against the next request would refuse an honest one.
            self.framing += len(data) - self.body_in_read
        elif self.in_head:
            # A read in which a request began and did not finish its head: its start may hold
            # the end of the request before, and the parser reports an unfinished header field
            # only once it ends, so the head's share is the read after what came before it.
            self.framing = max(self.framing, len(data) - self.begun_at)
        if not self.transport.is_closing():
            error = self._framing_error()
            if error is not None:
                self._refuse_framing(error)

    def on_message_begin(self) -> None:
        """A request's first byte: its count of bytes that are not body starts from zero."""
        super().on_message_begin()
        self.begun_at = self.reported_in_read
        self.reported_in_read += REQUEST_LINE_ALLOWANCE
        self.began_in_read = True
        self.in_head = True
        self.framing = self.head_size = self.body_size = 0
        self.trailers = False

    def on_url(self, url: bytes) -> None:
        """Part of the request line: counted against max_header_bytes."""
        self.head_size += len(url)
        self.reported_in_read += len(url)
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        """A header field, counted; one after the head is a trailer, which is refused."""
        if not self.in_head:
            self.trailers = True  # refused once the parser returns; never kept
            return
        self.head_size += len(name) + len(value) + 4
        self.reported_in_read += len(name) + len(value) + 4
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        """The head is in: its body, if any, now has body_timeout to arrive."""
        self.stop_waiting()
        self.in_head = False
        self.body_since = time.monotonic()
        self.guard.arriving[self] = None
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        """Body bytes: bounded by max_body_bytes in the app, not counted as framing."""
        self.body_in_read += len(body)
        self.reported_in_read += len(body)
        self.body_size += len(body)
        super().on_body(body)

    def _framing_error(self) -> EngineError | None:
        """What is wrong with the bytes of the request being read, if anything."""
        limit = self.guard.max_header_bytes
        if self.trailers:
            return TrailersRefused()
        if self.in_head or self.body_since is None:
            too_large = max(self.head_size, self.framing) > limit
            return HeadersTooLarge(limit) if too_large else None
        # Chunk-size lines and extensions may not outgrow the body (plus a head's worth).
        return FramingTooLarge(limit) if self.framing > 2 * limit + self.body_size else None

    def _refuse_framing(self, error: EngineError) -> None:
        reason = "headers_too_large" if isinstance(error, HeadersTooLarge) else "bad_framing"
        metrics.CONNECTIONS_CLOSED.labels(reason).inc()
        answering = self.running
        earlier = answering is not None and (self.in_head or answering is not self.cycle)
        if earlier and not answering.response_complete:
            self.abort()  # an earlier request's answer is on its way: no room for ours
        else:
            self.refuse(error)

    def on_message_complete(self) -> None:
        """The request is in: bytes from here on are the next request's."""
        super().on_message_complete()
        self.body_since = None
        self.guard.arriving.pop(self, None)
        self.framing = 0
        self.ended_in_read = True

    def on_response_complete(self) -> None:
        """Answered: wait for the next head (unless a pipelined request is next); after a
        refusal at the in-flight limit, not before its Retry-After has passed."""
        if not self.pipeline:
            self.wait()
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self.unparsed and not self.pipeline:
            data, self.unparsed = self.unparsed, b""
            self.data_received(data)
        if self.shed:
            self.shed = False
            self.flow.pause_reading()
            self.loop.call_later(self.guard.in_flight.retry_after, self._read_again)

    def _read_again(self) -> None:
        if not self.transport.is_closing():
            self.wait()  # the head deadline starts over
            self.flow.resume_reading()

    def pause_writing(self) -> None:
        """The client stopped reading: give it `send_timeout`, within `max_stalled` of them."""
        super().pause_writing()
        stalled = self.guard.stalled
        stalled[self] = time.monotonic()
        self.send_timer = self.loop.call_later(self.guard.send_timeout_seconds, self._cut_off)
        if len(stalled) > self.guard.max_stalled_connections:
            oldest = min(stalled, key=stalled.__getitem__)
            metrics.CONNECTIONS_CLOSED.labels("stalled_limit").inc()
            oldest.abort()

    def resume_writing(self) -> None:
        """The client reads again: so does the server, and a held request starts."""
        self._unstall()
        super().resume_writing()
        if self.deferred is not None:
            cycle, app = self.deferred
            self.deferred = None
            self._start_asgi_task(cycle, app)

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        """Run the app, or the cheap 429 when a table request finds the in-flight limit full."""
        if self.running is not None:
            self.transport.flush()  # type: ignore[attr-defined]  # so write_paused is current
        if self.flow.write_paused and self.running is not None:
            # A pipelined request of a client that is not reading its answers: no work for it
            # until it reads (resume_writing), or is cut off.
            self.deferred = (cycle, app)
            return
        path: str = cycle.scope.get("path", "")
        if bounded(path) and self.guard.in_flight.full():
            app = self._shed
            self.shed = True
        self.running = cycle
        super()._start_asgi_task(cycle, app)

    async def _shed(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
        error = self.guard.in_flight.overloaded()
        encoded = encode(error)
        status = encoded.status
        headers = encoded.headers
        if self.running.more_body:  # its body is still coming: close rather than read it
            headers = [*headers, (b"connection", b"close")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": encoded.body})
        labels = (*labels_of(scope, self.guard.routes), f"{status // 100}xx")
        metrics.REQUEST_SECONDS.labels(*labels).observe(time.perf_counter() - started)
        metrics.REQUESTS.labels(*labels).inc()

    def check_deadlines(self, now: float) -> None:
        """Close the connection if its head or body is overdue, or its lingering over (called by
        the guard's sweep)."""
        if self.lingering_until is not None and now > self.lingering_until:
            self.abort()
        if self.transport.is_closing():
            return
        if (
            self.waiting_since is not None
            and now - self.waiting_since > self.guard.header_timeout_seconds
        ):
            metrics.CONNECTIONS_CLOSED.labels("header_timeout").inc()
            if self.in_head:
                self.refuse(HeadTimeout(self.guard.header_timeout_seconds))
            else:
                self.close_now()
        elif self.body_since is not None:
            self._check_body(now - self.body_since)

    def _check_body(self, elapsed: float) -> None:
        """408 for a body past its deadline, or slower than the minimum rate after the grace."""
        guard = self.guard
        if elapsed > guard.body_timeout_seconds:
            reason, error = "body_timeout", BodyTimeout(guard.body_timeout_seconds)
        elif elapsed > BODY_GRACE_SECONDS and self.body_size < guard.min_body_rate * elapsed:
            reason, error = "body_rate", BodyTooSlow(guard.min_body_rate)
        else:
            return
        metrics.CONNECTIONS_CLOSED.labels(reason).inc()
        if self.running is not None and self.running.response_started:
            self.abort()  # answered already (say, refused early): nothing more to say
        else:
            self.refuse(error)

    def abort(self) -> None:
        """Drop the connection and what it buffered (close() would wait to send it first)."""
        self._unstall()
        self._disconnect_requests()
        self.transport.abort()

    def refuse(self, error: EngineError) -> None:
        """Answer `error` in the envelope and close the connection, outside any request."""
        self.transport.write(http_message(encode(error)))
        self._disconnect_requests()
        self.close_now()
        self.stop_waiting()
        self.body_since = None
        self.guard.arriving.pop(self, None)

    def _disconnect_requests(self) -> None:
        """Tell every request of this connection that its client is gone: their sends are
        skipped rather than written to a closed transport, and a read returns at once."""
        # The cycle answering now may be older than self.cycle when requests are pipelined.
        cycles = [self.running, self.cycle, *(cycle for cycle, _ in self.pipeline)]
        for cycle in cycles:
            if cycle is not None:
                cycle.disconnected = True
                cycle.message_event.set()

    def wait(self) -> None:
        """Start waiting for a head (the deadline and the eviction order count from now)."""
        self.waiting_since = time.monotonic()
        self.guard.waiting.pop(self, None)
        self.guard.waiting[self] = None  # newest last

    def stop_waiting(self) -> None:
        """A head is in (or the connection is going): no longer waiting."""
        self.waiting_since = None
        self.guard.waiting.pop(self, None)

    def _make_room(self) -> None:
        """Close the connection waiting longest for a head, else the slowest of the bodies
        arriving longest; this one if there is neither.

        guard.waiting and guard.arriving are kept in the order each began, so this takes no
        scan of every connection (a burst of 2,000 against 900 open took one per new one).
        """
        victim = next((c for c in self.guard.waiting if c is not self), None)
        if victim is None:
            victim = self._slowest_arriving() or self
        metrics.CONNECTIONS_CLOSED.labels("connection_limit").inc()
        victim.stop_waiting()
        victim.guard.arriving.pop(victim, None)
        victim.close_now()

    def _slowest_arriving(self) -> GuardedProtocol | None:
        """Of the EVICTION_CANDIDATES bodies arriving longest, the one with the fewest bytes a
        second so far (None when no body is arriving)."""
        now = time.monotonic()
        oldest = itertools.islice(self.guard.arriving, EVICTION_CANDIDATES)
        return min(oldest, key=lambda c: c.body_size / (now - c.body_since + 1e-3), default=None)

    def close_now(self) -> None:
        """Close after sending what was written, never lingering."""
        cast(CoalescedWrites, self.transport).close_now()

    def _linger(self) -> bool:
        """When the connection closes with its request's body still coming: half-close, and
        drop what arrives until LINGER_SECONDS or max_body_bytes (True: lingering instead)."""
        if self.body_since is None:
            return False
        self.body_since = None
        self.guard.arriving.pop(self, None)
        self.stop_waiting()
        self.lingering_until = time.monotonic() + LINGER_SECONDS
        self.transport.write_eof()
        self.flow.release()
        self.flow.resume_reading()
        return True

    def _cut_off(self) -> None:
        metrics.CONNECTIONS_CLOSED.labels("send_timeout").inc()
        self.abort()

    def _unstall(self) -> None:
        self.guard.stalled.pop(self, None)
        if self.send_timer is not None:
            self.send_timer.cancel()
            self.send_timer = None


class HeldFlow(FlowControl):
    """uvicorn's flow control, with reading held paused while the connection keeps bytes it
    has not parsed: uvicorn resumes reading after every answer and whenever an app waits for
    its body, which would append a read to the held bytes each time."""

    held = False

    def hold(self) -> None:
        """Stop reading until release()."""
        self.held = True
        self.pause_reading()

    def release(self) -> None:
        """Read again, if held."""
        if self.held:
            self.held = False
            self.resume_reading()

    def resume_reading(self) -> None:
        """Resume, unless held."""
        if not self.held:
            super().resume_reading()


class CoalescedWrites:
    """A connection's transport whose writes within one loop turn go out as one.

    uvicorn writes a response's head and body separately, and asyncio's selector transport
    makes one send() system call per write: under load those calls were a third of the event
    loop's time (py-spy, cached token queries). Gathering a turn's writes halves them.
    """

    def __init__(
        self,
        transport: asyncio.Transport,
        loop: asyncio.AbstractEventLoop,
        linger: Callable[[], bool] = lambda: False,
    ) -> None:
        self.transport = transport
        self.loop = loop
        self.pending: list[bytes] = []
        self.linger = linger  # asked at close(): True when the protocol lingers instead
        self.closing = False

    def write(self, data: bytes) -> None:
        """Send `data` with whatever else is written this turn."""
        if not self.pending:
            self.loop.call_soon(self.flush)
        self.pending.append(data)

    def flush(self) -> None:
        """Hand this turn's writes to the transport as one."""
        if self.pending and not self.transport.is_closing():
            data = self.pending[0] if len(self.pending) == 1 else b"".join(self.pending)
            self.transport.write(data)
        self.pending = []

    def close(self) -> None:
        """Close after sending what was written (or linger, if the protocol says so)."""
        self.flush()
        self.closing = True
        if not self.linger():
            self.transport.close()

    def close_now(self) -> None:
        """Close after sending what was written, never lingering."""
        self.flush()
        self.closing = True
        self.transport.close()

    def is_closing(self) -> bool:
        """Whether close() was called, lingering or not."""
        return self.closing or self.transport.is_closing()

    def abort(self) -> None:
        """Close at once, dropping what was written."""
        self.pending = []
        self.transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


def http_message(encoded: Encoded) -> bytes:
    """A whole HTTP/1.1 response that closes the connection, for answers outside any request."""
    status = encoded.status
    lines = [b"HTTP/1.1 %d %s\r\n" % (status, HTTPStatus(status).phrase.encode())]
    lines += [name + b": " + value + b"\r\n" for name, value in encoded.headers]
    return b"".join([*lines, b"connection: close\r\n\r\n", encoded.body])

"""The connection protocol: uvicorn's httptools protocol with guards on every request.

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
  longest for a head, else the slowest of the oldest bodies still arriving, else the one
  holding pipelined requests past the bound longest, or itself when every one has a request
  whole: the process never runs out of descriptors, and probes keep getting in however many
  idle, half-open, bodiless or pipelining connections a client opens;
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
- a table request that arrives while the in-flight count is at its limit (or its API key's
  share of it) is answered 429 at once by a tiny ASGI app (no middleware, no body read), and
  still counted in the metrics; its connection is then not read for the Retry-After it was
  given. A client that honours Retry-After loses nothing; one that resends at once (wrk does)
  no longer makes the server spend its CPU refusing thousands of requests a second instead of
  answering the admitted ones.

Accepting connections is service/server/accepting.py; the transport and flow control the
protocol reads and writes through, service/server/transport.py.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from functools import partial
from typing import Any, cast

from starlette.types import Receive, Scope, Send
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from service import metrics
from service.api.edge import bearer_token, bounded, labels_of
from service.engine.errors import EngineError
from service.errors import (
    BodyTimeout,
    BodyTooSlow,
    FramingTooLarge,
    HeadersTooLarge,
    HeadTimeout,
    Overloaded,
    TrailersRefused,
    encode,
)
from service.server.accepting import crowded
from service.server.guard import ConnectionGuard
from service.server.transport import CoalescedWrites, HeldFlow, http_message

LOGGER = logging.getLogger("service.server.protocol")
# How long a body may take before its rate counts (a head sent apart from its body, say).
BODY_GRACE_SECONDS = 2.0
# How long a connection closed with its request's body still coming drains it (see above).
LINGER_SECONDS = 2.0
# When room is needed, the slowest of this many bodies arriving longest is closed: choosing
# by rate, without scanning every connection.
EVICTION_CANDIDATES = 32


def protocol_for(guard: ConnectionGuard) -> type[GuardedProtocol]:
    """A protocol class for uvicorn.Config(http=...) bound to `guard`."""
    return type("GuardedProtocol", (GuardedProtocol,), {"guard": guard})


# Bytes of a request that no parser callback reports: its method, version, spaces and line ends
# (a method of up to 20 letters). Where a request began in a read is estimated from what the
# callbacks reported before it plus this per earlier request: at or after where it did begin
# (its head counted short by at most this much per earlier request in the read, so honest
# pipelining is never refused), unless an earlier request's chunk-size lines sat in the read.
REQUEST_LINE_ALLOWANCE = 40
# A read of more than WHOLE_READ bytes is parsed FIRST_PIECE bytes at a time, twice as many
# after each piece that queued no request: httptools parses all it is given, so a read of tiny
# pipelined requests parsed whole would queue thousands at once; in pieces it stops within one
# piece (about 14 of the smallest) of max_pipelined. A read the size of one request (a query)
# is parsed whole, in one call.
WHOLE_READ = 4096
FIRST_PIECE = 512
# While connections wait to be accepted (accepting.crowded()), pieces start this small: a
# connection pipelining past the bound is then closed after parsing a few requests, not ~15.
CROWDED_PIECE = 64


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
    # Why the request being answered was refused at the in-flight limit (None: it was not).
    refused: Overloaded | None = None

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
        self.guard.holding.pop(self, None)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Parse `data` in pieces; past max_pipelined queued requests, keep the rest unparsed
        and stop reading until the queue drains (on_response_complete)."""
        if self.lingering_until is not None:
            self.lingered += len(data)
            if self.lingered > self.guard.max_body_bytes:
                self.abort()
            return
        first = CROWDED_PIECE if crowded() else FIRST_PIECE
        piece_size = len(data) if len(data) <= WHOLE_READ else first
        while data and not self.transport.is_closing():
            piece, data = data[:piece_size], data[piece_size:]
            queued = len(self.pipeline)
            self._parse(piece)
            if data and len(self.pipeline) >= self.guard.max_pipelined:
                if crowded():
                    self._answer_and_close()
                    return
                self.unparsed = data
                self.guard.holding[self] = None
                # A body held unparsed is ours to read, not the client's to send: off the clock.
                self.guard.arriving.pop(self, None)
                self.flow.hold()
                return
            piece_size = first if len(self.pipeline) > queued else 2 * piece_size
        self.flow.release()

    def _answer_and_close(self) -> None:
        """Connections wait to be accepted: the request being answered is this connection's
        last (its answer says Connection: close if not yet started); those pipelined behind it
        are dropped unanswered, which a pipelining client must expect (RFC 9112, 9.3.2)."""
        metrics.CONNECTIONS_CLOSED.labels("pipelined_while_crowded").inc()
        self.pipeline.clear()
        self.flow.hold()  # read nothing more
        running = self.running
        if running is None or running.response_complete:
            self.transport.close()
        else:
            running.keep_alive = False

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
            self.guard.holding.pop(self, None)
            if self.body_since is not None:  # its bytes were here all along: a fresh clock
                self.body_since = time.monotonic()
                self.guard.arriving[self] = None
            self.data_received(data)
        if self.refused is not None:
            self.refused = None
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
        """Run the app, or the cheap 429 when a table request finds the in-flight limit (or its
        key's share of it) full."""
        if self.running is not None:
            self.transport.flush()  # type: ignore[attr-defined]  # so write_paused is current
        if self.flow.write_paused and self.running is not None:
            # A pipelined request of a client that is not reading its answers: no work for it
            # until it reads (resume_writing), or is cut off.
            self.deferred = (cycle, app)
            return
        path: str = cycle.scope.get("path", "")
        in_flight = self.guard.in_flight
        if in_flight.count >= in_flight.per_key and bounded(path):
            self.refused = in_flight.refusal(bearer_token(cycle.scope))
            if self.refused is not None:
                app = partial(self._shed, self.refused)
        self.running = cycle
        super()._start_asgi_task(cycle, app)

    async def _shed(self, error: Overloaded, scope: Scope, receive: Receive, send: Send) -> None:
        started = time.perf_counter()
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
        elif self.body_since is not None and not self.unparsed:
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
        arriving longest, else drop the one holding pipelined requests longest; this one if
        there is none of them.

        guard.waiting, guard.arriving and guard.holding are kept in the order each began, so
        this takes no scan of every connection (a burst of 2,000 against 900 open took one per
        new one).
        """
        metrics.CONNECTIONS_CLOSED.labels("connection_limit").inc()
        victim = next((c for c in self.guard.waiting if c is not self), None)
        if victim is None:
            victim = self._slowest_arriving()
        if victim is None:
            holding = next((c for c in self.guard.holding if c is not self), None)
            if holding is not None:
                self.guard.holding.pop(holding)
                holding.abort()  # its queued requests and unparsed bytes go with it
                return
            victim = self
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

"""Accepting connections: at most a burst a turn, never past the descriptors kept free.

At most ACCEPT_BURST connections a turn, on either loop (the `event_loop` setting):
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

A turn that leaves connections waiting in the kernel's queue (a whole burst taken, and the
socket still ready) marks the server crowded for CROWDED_SECONDS: crowded() is then true, and
a client pipelining past the bound gets only the answer in progress, with the connection closed
(service/server/protocol.py), so that a flood of such connections costs one answer each and
the queue drains, where a probe's connection waits.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import resource
import select
import socket
import time
from typing import Any

import uvloop

LOGGER = logging.getLogger("service.server.accepting")
# Descriptors kept free beyond those open at start: room for connections being accepted and
# closed (ACCEPT_BURST a turn, a few turns in flight) and files a reload opens.
RESERVED_DESCRIPTORS = 128


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
    "asyncio": "service.server.accepting:BoundedAcceptLoop",
    "uvloop": "service.server.accepting:BoundedAcceptUVLoop",
}


# How long after a turn that left connections waiting the server counts as crowded.
CROWDED_SECONDS = 1.0
_crowded_until = 0.0


def crowded() -> bool:
    """Whether an accept turn left connections waiting within the last CROWDED_SECONDS."""
    return time.monotonic() < _crowded_until


def _note_waiting(sock: socket.socket) -> None:
    """After an accept turn: crowded if connections are still waiting on `sock`."""
    global _crowded_until
    try:
        ready, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):  # closed meanwhile
        return
    if ready:
        _crowded_until = time.monotonic() + CROWDED_SECONDS


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
        _note_waiting(sock)


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
        _note_waiting(self.sock)  # a whole burst taken: are more waiting?

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

"""The event loop: asyncio's selector loop, accepting at most ACCEPT_BURST connections a turn.

Measured under loadtests.overload and loadtests.attack (BENCHMARKS.md):
- uvloop (libuv) accepts one connection per poll event, so while the loop is busy answering a
  flood it accepted about 20 connections a second, and a client opening a new connection (a
  health probe) waited seconds in the kernel's accept queue;
- asyncio accepts up to the listen backlog (uvicorn: 2,048) per event before any connection is
  set up, so 2,000 half-open connections against 1,024 descriptors ran it out of descriptors,
  and on EMFILE asyncio stops accepting for a whole second.
Capping each turn's accepts below the descriptors kept free (guards.RESERVED_DESCRIPTORS) lets
the connection bound (connections.py) close old connections as fast as new ones come, without
ever running out. The listening socket stays ready, so the next turn accepts the next ones.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

# Connections accepted per loop turn. asyncio sets an accepted socket up a turn later, and a
# connection closed to make room frees its descriptor a turn after that: two bursts plus the
# process's own files must fit in guards.RESERVED_DESCRIPTORS (128).
ACCEPT_BURST = 16
# uvicorn's `loop` setting takes an import string of a loop factory: this class.
FACTORY = "service.server.event_loop:BoundedAcceptLoop"


class BoundedAcceptLoop(asyncio.SelectorEventLoop):
    """asyncio's selector event loop with the accept burst capped (see the module docstring)."""

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

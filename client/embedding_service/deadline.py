"""A synchronous call's deadline, kept by every socket operation the call makes.

httpx's timeout bounds each connect, read and write alone: a server that sends a byte every few
seconds holds a call for as long as it likes. Client sets the call's deadline here (a context
variable, so every thread has its own) and its connections' network streams wait at most until
it: an operation that would end past it raises httpcore's timeout, which httpx raises as its own
and the client as TimedOut. AsyncClient needs none of this: asyncio.timeout bounds its calls.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpx

# monotonic() time by which the running call must end (None: no bound).
DEADLINE: ContextVar[float | None] = ContextVar("embedding_service_deadline", default=None)
# A long write is sent in steps of this many bytes, each bounded by what is left of the call.
WRITE_STEP = 64 * 1024


@contextmanager
def call_deadline(timeout: float | None) -> Iterator[None]:
    """Within this block, every socket operation ends `timeout` seconds from now at the latest."""
    token = DEADLINE.set(None if timeout is None else time.monotonic() + timeout)
    try:
        yield
    finally:
        DEADLINE.reset(token)


def remaining() -> float | None:
    """Seconds left of the running call (None: it has no deadline)."""
    deadline = DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()


def bounded(timeout: float | None, operation: str) -> float | None:
    """An operation's timeout, cut to what is left of the call; raises httpcore's timeout for
    `operation` (connect, read, write) when nothing is left."""
    left = remaining()
    if left is None:
        return timeout
    if left <= 0:
        import httpcore  # httpx's transport has imported it; importing the client does not

        expired = {"connect": httpcore.ConnectTimeout, "write": httpcore.WriteTimeout}
        raise expired.get(operation, httpcore.ReadTimeout)("the call's timeout has passed")
    return left if timeout is None else min(timeout, left)


class DeadlineStream:
    """A connection's network stream (httpcore's interface) that ends every wait by the call's
    deadline."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, bounded(timeout, "read"))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        for start in range(0, len(buffer), WRITE_STEP):
            step = buffer[start : start + WRITE_STEP]
            self.stream.write(step, bounded(timeout, "write"))

    def close(self) -> None:
        self.stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> DeadlineStream:
        tls = self.stream.start_tls(ssl_context, server_hostname, bounded(timeout, "connect"))
        return DeadlineStream(tls)

    def get_extra_info(self, info: str) -> Any:
        return self.stream.get_extra_info(info)


class DeadlineBackend:
    """httpcore's network backend whose streams are DeadlineStreams."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> DeadlineStream:
        limit = bounded(timeout, "connect")
        return DeadlineStream(
            self.backend.connect_tcp(host, port, limit, local_address, socket_options)
        )

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> DeadlineStream:
        limit = bounded(timeout, "connect")
        return DeadlineStream(self.backend.connect_unix_socket(path, limit, socket_options))

    def sleep(self, seconds: float) -> None:
        self.backend.sleep(seconds)


def keep_call_deadlines(http: httpx.Client) -> int:
    """Give the connection pools httpx built for `http` (its transport and proxy mounts)
    streams that keep the call's deadline; returns how many it changed.

    httpx offers no public way to choose the pool's network backend, so this sets httpcore's
    `_network_backend` on each pool before it opens a connection. A transport passed in
    http_options of another kind is left as it is: its calls are bounded by httpx's per-read
    timeout only (docs/client.md).
    """
    transports = [getattr(http, "_transport", None), *getattr(http, "_mounts", {}).values()]
    changed = 0
    for transport in transports:
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, DeadlineBackend):
            pool._network_backend = DeadlineBackend(backend)  # type: ignore[union-attr]
            changed += 1
    return changed

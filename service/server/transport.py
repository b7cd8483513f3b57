"""A connection's transport and flow control, as the guarded protocol uses them: writes of one
loop turn sent as one, reading held while bytes wait unparsed, and whole answers written
outside any request."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from uvicorn.protocols.http.flow_control import FlowControl

from service.errors import Encoded


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

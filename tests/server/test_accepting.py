"""Accepting on uvloop: at most ACCEPT_BURST connections a turn, as on asyncio's loop, and a
pause (not a spin, not a crash) when the process is out of descriptors."""

from __future__ import annotations

import asyncio
import errno
import socket
from contextlib import ExitStack
from typing import ClassVar

from service.server.accepting import (
    ACCEPT_BURST,
    ACCEPT_RETRY_SECONDS,
    BoundedAcceptUVLoop,
    BurstServer,
)


class Counting(asyncio.Protocol):
    made: ClassVar[list[asyncio.BaseTransport]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        Counting.made.append(transport)


def listener() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)
    return sock


def test_each_turn_accepts_at_most_a_burst_and_each_connection_gets_its_protocol() -> None:
    Counting.made = []
    loop = BoundedAcceptUVLoop()
    waiting = 2 * ACCEPT_BURST + 5
    with ExitStack() as stack, listener() as sock:
        stack.callback(loop.close)
        server = loop.run_until_complete(loop.create_server(Counting, sock=sock, backlog=2048))
        assert isinstance(server, BurstServer)
        port = sock.getsockname()[1]
        for _ in range(waiting):  # complete in the kernel's queue before any accept
            stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=5))
        loop.remove_reader(sock.fileno())  # only the calls below accept
        made = []
        for _ in range(3):
            server.accept()  # what one readiness event of the listening socket runs
            loop.run_until_complete(asyncio.sleep(0.05))
            made.append(len(Counting.made))
        assert made == [ACCEPT_BURST, 2 * ACCEPT_BURST, waiting]
        server.close()
        loop.run_until_complete(server.wait_closed())
        assert sock.fileno() == -1
        for transport in Counting.made:
            transport.close()
        loop.run_until_complete(asyncio.sleep(0))


class OutOfDescriptors(socket.socket):
    calls = 0

    def accept(self) -> tuple[socket.socket, object]:
        OutOfDescriptors.calls += 1
        raise OSError(errno.EMFILE, "Too many open files")


def test_out_of_descriptors_pauses_accepting_then_resumes() -> None:
    """With a connection waiting, the listening socket stays readable: without the pause the
    loop would call accept() again every turn."""
    loop = BoundedAcceptUVLoop()
    sock = OutOfDescriptors()
    sock.bind(("127.0.0.1", 0))
    with ExitStack() as stack:
        stack.callback(loop.close)
        stack.callback(sock.close)
        server = BurstServer(loop, Counting, sock, 2048)
        stack.enter_context(socket.create_connection(sock.getsockname(), timeout=5))
        loop.run_until_complete(asyncio.sleep(ACCEPT_RETRY_SECONDS / 2))
        assert OutOfDescriptors.calls == 1
        loop.run_until_complete(asyncio.sleep(ACCEPT_RETRY_SECONDS / 2 + 0.3))
        assert OutOfDescriptors.calls == 2  # resumed once, and paused again
        server.close()

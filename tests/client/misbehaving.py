"""A real server that misbehaves: a socket server that reads each request and answers it with a
given behaviour (trickling, endless, compressed, reset, not HTTP), and a hang guard to call the
clients with."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from embedding_service import AsyncClient, Client

# A behaviour answers one request on `conn` (the server has read it); it returns whether the
# connection may carry the next request.
Behaviour = Callable[["Request"], bool]
# How long a test waits for a call that must fail quickly: a hang guard, not a timing.
HANG_GUARD_SECONDS = 10.0


@dataclass
class Request:
    """A request the server read, on its connection, with the server's stop signal."""

    conn: socket.socket
    head: bytes
    body: bytes
    stopped: threading.Event
    connection: int  # which connection, from 1
    on_connection: int  # which request on it, from 1

    @property
    def path(self) -> str:
        return self.head.split(b" ", 2)[1].decode()


@dataclass
class Server:
    """The URL of a misbehaving server, the requests it has read in order, and how many it
    read on each connection."""

    url: str
    paths: list[str] = field(default_factory=list)
    per_connection: list[int] = field(default_factory=list)


def answer(
    request: Request,
    body: bytes,
    status: str = "200 OK",
    headers: dict[str, str] | None = None,
) -> bool:
    """Send a whole answer with its content-length; keep the connection."""
    fields = {"content-type": "application/json", "content-length": str(len(body))}
    fields.update(headers or {})
    head = "".join(f"{name}: {value}\r\n" for name, value in fields.items())
    request.conn.sendall(f"HTTP/1.1 {status}\r\n{head}\r\n".encode() + body)
    return True


def trickle(request: Request, data: bytes, pause: float = 0.25) -> bool:
    """Send `data` a byte at a time, a pause between bytes, until the server stops."""
    for byte in data:
        if request.stopped.wait(pause):
            break
        request.conn.sendall(bytes([byte]))
    return False


def reset(request: Request) -> bool:
    """Close the connection with a reset (RST), whatever is unread."""
    request.conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    request.conn.close()
    return False


def _read_request(conn: socket.socket) -> tuple[bytes, bytes] | None:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    return head, body


@contextmanager
def misbehaving(behaviour: Behaviour) -> Iterator[Server]:
    """A server on a free port that answers every request with `behaviour`."""
    listener = socket.create_server(("127.0.0.1", 0))
    server = Server(f"http://127.0.0.1:{listener.getsockname()[1]}")
    stopped = threading.Event()

    def serve(conn: socket.socket, connection: int) -> None:
        with suppress(OSError), conn:
            while (read := _read_request(conn)) is not None:
                server.per_connection[connection - 1] += 1
                count = server.per_connection[connection - 1]
                request = Request(conn, *read, stopped, connection, count)
                server.paths.append(request.path)
                if not behaviour(request):
                    return

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            server.per_connection.append(0)
            arguments = (conn, len(server.per_connection))
            threading.Thread(target=serve, args=arguments, daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield server
    finally:
        stopped.set()
        listener.close()


def outcome_within_guard(call: Callable[[], Any]) -> BaseException | Any:
    """What `call` raises (or returns), failing the test if it has not ended within the hang
    guard."""
    result: list[Any] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as error:  # handed to the test, which asserts what it is
            result.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(HANG_GUARD_SECONDS)
    assert not thread.is_alive(), f"the call still ran after {HANG_GUARD_SECONDS} s"
    return result[0]


def calling(
    kind: str, url: str, options: dict[str, Any], method: str = "tables", *args: Any, **kw: Any
) -> Callable[[], Any]:
    """A call of `method` on a new Client or AsyncClient (`kind` "sync" or "async") of `url`."""
    if kind == "sync":

        def synchronously() -> Any:
            with Client(url, **options) as client:
                return getattr(client, method)(*args, **kw)

        return synchronously

    async def asynchronously() -> Any:
        async with AsyncClient(url, **options) as client:
            return await getattr(client, method)(*args, **kw)

    return lambda: asyncio.run(asynchronously())


def endless(request: Request, chunk: bytes) -> bool:
    """A chunked answer that never ends: `chunk` again and again until the client goes."""
    request.conn.sendall(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    )
    frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    while not request.stopped.is_set():
        request.conn.sendall(frame)
    return False


def later(seconds: float, behaviour: Behaviour) -> Behaviour:
    """`behaviour`, after a pause."""

    def delayed(request: Request) -> bool:
        time.sleep(seconds)
        return behaviour(request)

    return delayed


def gzip_of_zeros(size: int) -> bytes:
    """`size` zero bytes, gzipped (about a thousandth of their size)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    step = b"\0" * (1 << 20)
    return b"".join(packer.compress(step) for _ in range(size >> 20)) + packer.flush()

"""The listening socket while tables load: bound at once, answering 503 until they are ready.

`serve` binds its port first, then loads every table; meanwhile this responder answers each
connection on that socket: `/healthz` 200 (the process is alive), anything else 503 with the
error envelope (`TableNotReady`), so probes and clients see "not ready", never "connection
refused". Once the tables are loaded it stops and the same socket goes to uvicorn; connections
waiting in the kernel's queue are then accepted by the real server. A table that fails to load
stops start-up as before (one line, exit code 2) without uvicorn ever starting.
"""

from __future__ import annotations

import selectors
import socket
import threading
from contextlib import suppress

from service.engine.errors import EngineError, TableNotReady
from service.errors import NotReady, encode
from service.server.transport import http_message

TABLES = "/v1/tables/"
# A loading server reads at most this much of a request, waiting at most this long for it.
HEAD_BYTES = 16 * 1024
READ_SECONDS = 0.5


def listening_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to host:port and listening (SO_REUSEADDR, as uvicorn binds)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say they are TCP, and
    # without it Nagle's algorithm held every small answer ~40 ms (700 against 2,900 /healthz
    # a second, measured).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


def answer(head: bytes, reason: str) -> bytes:
    """The whole HTTP response for a request head received while loading."""
    path = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b""
    route = path.split(b"?")[0].decode("latin-1")
    if route == "/healthz":
        body = b'{"status":"ok"}'
        return (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (len(body), body)
        )
    # As the app answers: TableNotReady for a table's routes, NotReady for the rest.
    parts = route.split("/")
    error: EngineError = NotReady(reason)
    if route.startswith(TABLES) and len(parts) > 3 and parts[3]:
        error = TableNotReady(parts[3], "loading")
    return http_message(encode(error))


class LoadingResponder:
    """Answers connections on `sock` from a thread until stop()."""

    def __init__(self, sock: socket.socket, reason: str = "tables not ready: loading") -> None:
        self.sock = sock
        self.reason = reason
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loading-responder", daemon=True)

    def __enter__(self) -> LoadingResponder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop answering; the socket stays open and listening for the real server."""
        self._stopping.set()
        self._thread.join()

    def _run(self) -> None:
        # Non-blocking for good: workers share the socket (and its flags), and another worker
        # may take a connection first; asyncio wants it non-blocking anyway.
        self.sock.setblocking(False)
        with selectors.DefaultSelector() as selector:
            selector.register(self.sock, selectors.EVENT_READ)
            while not self._stopping.is_set():
                if not selector.select(timeout=0.1):
                    continue
                try:
                    connection, _ = self.sock.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                with connection:
                    self._answer(connection)

    def _answer(self, connection: socket.socket) -> None:
        connection.settimeout(READ_SECONDS)
        head = b""
        with suppress(OSError):
            while b"\r\n\r\n" not in head and len(head) < HEAD_BYTES:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                head += chunk
            connection.sendall(answer(head, self.reason))

"""The port while tables load: bound at once, answering 503 (healthz 200) until they are."""

from __future__ import annotations

import socket

from harness.server import free_port
from service.server.starting import LoadingResponder, listening_socket


def test_while_loading_the_port_answers_not_ready() -> None:
    port = free_port()
    sock = listening_socket("127.0.0.1", port)
    with sock, LoadingResponder(sock):
        assert probe(port, "/healthz").startswith(b"HTTP/1.1 200")
        ready = probe(port, "/readyz")
        assert ready.startswith(b"HTTP/1.1 503") and b'"NotReady"' in ready
        query = probe(port, "/v1/tables/t/neighbors")
        assert query.startswith(b"HTTP/1.1 503") and b'"TableNotReady"' in query


def probe(port: int, path: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
        answer = b""
        while chunk := connection.recv(4096):
            answer += chunk
    return answer


def test_the_listening_socket_says_it_is_tcp() -> None:
    # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP; a socket made with
    # proto 0 left Nagle's algorithm on and held every small answer ~40 ms.
    with listening_socket("127.0.0.1", free_port()) as sock:
        assert sock.proto == socket.IPPROTO_TCP
        twin = socket.socket(fileno=sock.fileno())  # as a worker opens the one it is handed
        assert twin.proto == socket.IPPROTO_TCP
        twin.detach()

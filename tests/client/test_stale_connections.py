"""A kept-alive connection the server closes just as a request goes out on it (its idle
deadline, header_timeout_seconds) is reset with the request unread. The client sends such a
request once more, on a new connection; a second failure is still Unreachable."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from embedding_service import AsyncClient, Client
from embedding_service.errors import Unreachable

ANSWER = b'{"tables": []}'
OK = (
    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
    b"content-length: " + str(len(ANSWER)).encode() + b"\r\n\r\n" + ANSWER
)


def read_head(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return b""
        data += chunk
    return data


def reset(conn: socket.socket) -> None:
    """Close with a reset, the request unread (what a close with unread data sends)."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


@contextmanager
def server(
    answered_per_connection: int, connections_answering: int
) -> Iterator[tuple[str, list[int]]]:
    """A server that answers `answered_per_connection` requests on a connection, then resets it
    at the next one; only the first `connections_answering` connections answer at all. Yields
    its URL and the requests seen per connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[int] = []

    def run() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            seen.append(0)
            answering = len(seen) <= connections_answering
            while read_head(conn):
                seen[-1] += 1
                if not answering or seen[-1] > answered_per_connection:
                    reset(conn)
                    break
                conn.sendall(OK)
            else:
                conn.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        listener.close()


def test_a_request_reset_on_a_kept_alive_connection_is_sent_again_on_a_new_one() -> None:
    with server(answered_per_connection=1, connections_answering=2) as (url, seen):
        with Client(url) as client:
            assert client.tables() == []
            assert client.tables() == []  # its kept-alive connection is reset: sent again
        assert seen == [2, 1]


def test_the_async_client_sends_it_again_too() -> None:
    async def twice(url: str) -> list[object]:
        async with AsyncClient(url) as client:
            return [await client.tables(), await client.tables()]

    with server(answered_per_connection=1, connections_answering=2) as (url, seen):
        assert asyncio.run(twice(url)) == [[], []]
        assert seen == [2, 1]


def test_a_second_reset_is_unreachable() -> None:
    with server(answered_per_connection=1, connections_answering=1) as (url, seen):
        with Client(url) as client:
            assert client.tables() == []
            with pytest.raises(Unreachable, match=r"reset|disconnected"):
                client.tables()
        assert seen == [2, 1]

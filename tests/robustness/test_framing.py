"""Every byte of a request that is not body is counted against a bound.

The service's connection protocol under a real uvicorn server on a real socket, around a tiny
ASGI app whose `/slow` answer waits, so a head can be pipelined behind a request in progress.
The attacks: trailers that never end, one trailer line that never ends, chunk extensions that
never end, and a pipelined head that never ends. Each must be refused within a bounded number
of bytes, and the server must go on answering.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from service.runtime.batching import InFlight
from service.server import accepting
from service.server.guard import ConnectionGuard
from service.server.protocol import FIRST_PIECE, protocol_for

LIMIT = 8192
SENT_AT_MOST = 16 * 1024 * 1024  # what an attacker tries to send on one connection


async def app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
    """200 "ok" for every request; /slow answers after two seconds."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"] == "/slow":
        await asyncio.sleep(2)
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


SERVERS: list[uvicorn.Server] = []  # the module's server, to look at its connections


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    guard = ConnectionGuard(
        max_header_bytes=LIMIT,
        header_timeout_seconds=10,
        body_timeout_seconds=10,
        min_body_rate=1024,
        max_connections=64,
        send_timeout_seconds=10,
        max_stalled_connections=8,
        max_pipelined=16,
        max_body_bytes=1 << 20,
        in_flight=InFlight(64, 1),
        routes=[],
    )
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        config = uvicorn.Config(app, http=protocol_for(guard), log_level="error", lifespan="off")
        server = uvicorn.Server(config)
        SERVERS.append(server)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.01)
        yield listener.getsockname()[1]
        server.should_exit = True
        thread.join(timeout=10)


def attack(port: int, opening: bytes, repeated: bytes) -> tuple[int, bytes]:
    """Send `opening`, then `repeated` until the server closes (or SENT_AT_MOST bytes):
    the bytes sent and everything the server answered."""
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(opening)
        batch = repeated * max(1, 65536 // len(repeated))
        try:
            while sent < SENT_AT_MOST:
                sock.sendall(batch)
                sent += len(batch)
        except (BrokenPipeError, ConnectionResetError):
            pass
        sock.settimeout(5)
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return sent, answer


def answers(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        return sock.recv(65536).startswith(b"HTTP/1.1 200")


CHUNKED = b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"


@pytest.mark.parametrize(
    ("opening", "repeated", "refused_as"),
    [
        # The audit's case: the first trailer line is enough to refuse.
        (CHUNKED + b"1\r\na\r\n0\r\n", b"t1: " + b"v" * 200 + b"\r\n", b"TrailersRefused"),
        # One trailer line that never ends: the parser never reports it, the bytes count.
        (CHUNKED + b"1\r\na\r\n0\r\nt: ", b"v" * 4096, b"FramingTooLarge"),
        # A chunk extension that never ends.
        (CHUNKED + b"1;name=", b"v" * 4096, b"FramingTooLarge"),
    ],
    ids=["endless-trailers", "endless-trailer-line", "endless-chunk-extension"],
)
def test_bytes_after_the_head_are_bounded(
    port: int, opening: bytes, repeated: bytes, refused_as: bytes
) -> None:
    sent, answer = attack(port, opening, repeated)
    assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    assert b'"type":"' + refused_as + b'"' in answer
    assert sent < SENT_AT_MOST  # closed long before the attacker was done
    assert answers(port)


def test_tiny_chunks_are_refused_once_their_framing_outgrows_the_body(port: int) -> None:
    """One byte of body per chunk is five of framing: past the body plus the bound, refused."""
    _, answer = attack(port, CHUNKED, b"1\r\na\r\n")
    assert b'"type":"FramingTooLarge"' in answer


def test_a_head_pipelined_behind_a_slow_request_is_bounded(port: int) -> None:
    slow = b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
    sent, answer = attack(port, slow + b"GET /healthz HTTP/1.1\r\nX-Pad: ", b"a" * 4096)
    assert b"HTTP/1.1 200" not in answer  # cut off while /slow was still being answered
    assert sent < SENT_AT_MOST
    assert b"HTTP/1.1 431" not in answer  # no answer of ours interleaved with /slow's
    assert answers(port)


def test_a_pipelined_head_over_the_bound_closes_the_connection(port: int) -> None:
    """Behind a request not yet answered there is no room for a 431: the connection goes."""
    quick = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(quick + b"GET /healthz HTTP/1.1\r\nX-Pad: " + b"a" * (2 * LIMIT))
        sock.settimeout(5)
        answer = b""
        try:
            while chunk := sock.recv(65536):  # ends: the server closed the connection
                answer += chunk
        except ConnectionResetError:
            pass  # closed by a reset (the connection was aborted): closed all the same
    assert b"HTTP/1.1 431" not in answer and answer.count(b"HTTP/1.1") <= 1


def test_chunked_bodies_and_pipelined_requests_of_honest_size_still_pass(port: int) -> None:
    body = b"x" * 100_000
    chunked = b"".join(
        b"%x\r\n%s\r\n" % (len(part), part)
        for part in (body[i : i + 16384] for i in range(0, len(body), 16384))
    )
    request = (
        b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + chunked
        + b"0\r\n\r\n"
    )
    pipelined = b"GET /a HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"p" * (LIMIT // 2) + b"\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request + pipelined * 20)
        sock.settimeout(5)
        answer = b""
        while answer.count(b"HTTP/1.1 200") < 21:
            chunk = sock.recv(65536)
            assert chunk, answer[-300:]
            answer += chunk


@pytest.mark.parametrize("size", [16, 32, 48])
def test_honest_small_chunks_are_read_whole(port: int, size: int) -> None:
    """A body sent as many small chunks (framing a third of the body, far under the bound)
    is answered, however the reads split it: no request was ever too large."""
    body = b"x" * 300_000
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(body[i : i + size]), body[i : i + size])
        for i in range(0, len(body), size)
    )
    head = b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head + chunks + b"0\r\n\r\n")
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]


def test_pipelined_requests_queue_at_most_the_bound_and_all_are_answered(port: int) -> None:
    """20,000 requests in one write behind a slow one: while it is answered, the connection
    holds at most max_pipelined requests and one piece's worth; then every one is answered."""
    healthz = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    count = 20_000
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sender = threading.Thread(
            target=sock.sendall, args=(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n" + healthz * count,)
        )
        sender.start()
        time.sleep(1)  # /slow takes two seconds
        queued = [len(c.pipeline) for c in SERVERS[0].server_state.connections]
        answers = b""
        while answers.count(b"HTTP/1.1 200") < count + 1:
            chunk = sock.recv(1 << 20)
            assert chunk, answers[-300:]
            answers += chunk
        sender.join()
    assert max(queued) <= 16 + FIRST_PIECE // len(healthz) + 1, queued
    assert answers.count(b"HTTP/1.1 200") == count + 1


def test_while_connections_wait_a_pipelining_client_gets_the_answer_in_progress_and_a_close(
    port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Crowded (connections waiting to be accepted), a connection pipelining past the bound
    costs one answer: the request in progress is answered with Connection: close, those
    behind it are dropped unanswered (the client retries them, RFC 9112, 9.3.2)."""
    monkeypatch.setattr(accepting, "_crowded_until", time.monotonic() + 60)
    healthz = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n" + healthz * 2_000)
        answers = b""
        while chunk := sock.recv(65536):  # ends: the server closed the connection
            answers += chunk
    assert answers.count(b"HTTP/1.1 200") == 1, answers[:500]
    assert b"connection: close" in answers.lower()


def test_a_turn_that_leaves_connections_waiting_marks_the_server_crowded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(accepting, "_crowded_until", 0.0)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        accepting._note_waiting(listener)
        assert not accepting.crowded()  # nobody waits
        with socket.create_connection(listener.getsockname(), timeout=5):
            accepting._note_waiting(listener)
            assert accepting.crowded()

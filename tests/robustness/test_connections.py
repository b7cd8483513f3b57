"""What one client can do with connections alone: slow bodies, huge or slow heads, thousands of
idle connections. Each against a real server process over raw sockets."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

from tests.conftest import small_vectors
from tests.robustness.conftest import write_table
from tests.robustness.servers import call, server_process

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=["uvloop", "asyncio"])
def server(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[str]:
    """A server of the small table with tight limits, in a process capped at 256 descriptors,
    on each event loop (both accept at most a burst a turn: service/server/accepting.py)."""
    table = write_table(tmp_path_factory.mktemp("connections") / "tables", small_vectors())
    env = {
        "EMBEDDING_SERVICE_EVENT_LOOP": request.param,
        "EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(table)}]),
        "EMBEDDING_SERVICE_MAX_IN_FLIGHT": "4",
        "EMBEDDING_SERVICE_BODY_TIMEOUT_SECONDS": "2",
        "EMBEDDING_SERVICE_HEADER_TIMEOUT_SECONDS": "2",
        "EMBEDDING_SERVICE_MAX_HEADER_BYTES": "8192",
    }
    with server_process(env, open_files=256) as (_, base):
        yield base


def connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def read_all(sock: socket.socket, seconds: float = 10) -> bytes:
    """Everything the server sends until it closes the connection (or `seconds` pass)."""
    sock.settimeout(seconds)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except TimeoutError:
        data += b"<still open>"
    return data


def neighbors(base: str) -> int:
    return call(f"{base}/v1/tables/small/neighbors", {"token": "king", "k": 2})[0]


SLOW_HEAD = (
    b"POST /v1/tables/small/neighbors HTTP/1.1\r\nHost: x\r\n"
    b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
)


def closed_for(server: str, reason: str) -> float:
    """connections_closed_total for one reason, from /metrics."""
    text = _metrics(server)
    prefix = f'embedding_service_connections_closed_total{{reason="{reason}"}} '
    lines = [line for line in text.splitlines() if line.startswith(prefix)]
    return float(lines[0].removeprefix(prefix)) if lines else 0.0


def test_slow_bodies_hold_no_in_flight_slot_and_get_408(server: str) -> None:
    with ExitStack() as stack:
        slow = [stack.enter_context(connect(server)) for _ in range(12)]  # 3x max_in_flight
        for sock in slow:
            sock.sendall(SLOW_HEAD + b'{"tok')
        time.sleep(0.3)
        assert neighbors(server) == 200  # the slow bodies hold no slot
        started = time.monotonic()
        answers = [read_all(sock) for sock in slow]
    assert time.monotonic() - started < 6
    for answer in answers:
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        assert b'"type":"BodyTimeout"' in answer
        assert not answer.endswith(b"<still open>")  # and the connection is closed


def test_a_huge_head_gets_431_and_the_connection_closes(server: str) -> None:
    before = closed_for(server, "headers_too_large")
    with connect(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Padding: ")
        started = time.monotonic()
        try:
            for _ in range(256):  # up to 16 MiB, far past the 8 KiB limit
                sock.sendall(b"a" * 65536)
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while we were still sending: refused early, as it should be
        answer = read_all(sock)
    assert time.monotonic() - started < 5
    assert answer.startswith(b"HTTP/1.1 431"), answer[:200]
    assert b'"type":"HeadersTooLarge"' in answer
    assert call(f"{server}/healthz")[0] == 200
    assert closed_for(server, "headers_too_large") == before + 1


def test_half_sent_and_silent_connections_are_closed_after_the_head_deadline(server: str) -> None:
    before = closed_for(server, "header_timeout")
    with connect(server) as partial, connect(server) as silent:
        partial.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        answers = read_all(partial), read_all(silent)
    assert time.monotonic() - started < 6
    assert answers[0].startswith(b"HTTP/1.1 408"), answers[0][:200]
    assert b'"type":"HeadTimeout"' in answers[0]
    assert answers[1] == b""  # closed without a word: it never started a request
    assert closed_for(server, "header_timeout") == before + 2


def test_probes_answer_while_a_client_holds_more_connections_than_descriptors(
    server: str,
) -> None:
    """400 half-open connections against a process with 256 descriptors: the server keeps at
    most max_connections (256 - 128) of them, closing the one waiting longest for a head to make
    room, so it never runs out of descriptors and a new connection (a health probe) still gets
    in and answers. (Connections it has not accepted yet wait in the kernel's queue.)"""
    before = closed_for(server, "connection_limit")
    with ExitStack() as stack:
        for _ in range(400):
            sock = stack.enter_context(connect(server))
            sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # a head that never completes
        time.sleep(0.3)
        statuses = [call(f"{server}/healthz")[0] for _ in range(5)]
        assert statuses == [200] * 5
        assert neighbors(server) == 200
        assert closed_for(server, "connection_limit") > before


def _metrics(server: str) -> str:
    with connect(server) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return read_all(sock).decode()


@contextmanager
def holding_the_only_slot(base: str, slots: int = 1, key: str | None = None) -> Iterator[None]:
    """While inside, long requests hold `slots` in-flight slots, the server's only one by
    default (max_in_flight 1): evaluations of the whole built-in questions-words set, about 3 s
    of work on the default table here (one computes, the others wait in the analysis queue,
    each holding its slot), against the few milliseconds each request refused meanwhile takes.
    (A client that pipelines large answers and does not read them holds no slot: its first
    answer is buffered and the rest wait, see
    test_a_client_that_does_not_read_gets_no_further_work_done.)
    Their answers are read on the way out and must be 200s."""
    body = json.dumps({"builtin": "questions-words"}).encode()
    authorization = b"" if key is None else b"Authorization: Bearer %s\r\n" % key.encode()
    with ExitStack() as stack:
        holders = [stack.enter_context(connect(base)) for _ in range(slots)]
        for holder in holders:
            holder.sendall(
                b"POST /v1/tables/minilm/evaluate HTTP/1.1\r\nHost: x\r\n%s"
                b"Content-Type: application/json\r\nConnection: close\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (authorization, len(body), body)
            )
        deadline = time.monotonic() + 20
        while _in_flight(base) < slots and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _in_flight(base) == slots
        yield
        answers = [read_all(holder, 120) for holder in holders]
    for answer in answers:
        assert answer.startswith(b"HTTP/1.1 200"), answer[:300]


def test_table_requests_arriving_at_the_in_flight_limit_are_refused_at_once() -> None:
    """While the only in-flight slot is held, table requests are refused with 429 from the
    connection itself (no body read, no middleware), in the envelope, with Retry-After, and
    counted in the metrics under their route; probes still answer."""
    env = {"EMBEDDING_SERVICE_MAX_IN_FLIGHT": "1", "EMBEDDING_SERVICE_CACHE_BYTES": "0"}
    with server_process(env) as (_, base):
        before = _requests_4xx(base)
        with holding_the_only_slot(base):
            refused = [
                call(f"{base}/v1/tables/minilm/neighbors", {"token": "king"}) for _ in range(5)
            ]
            with connect(base) as sock:
                body = b'{"token": "king"}'
                sock.sendall(
                    b"POST /v1/tables/minilm/neighbors HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\nConnection: close\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                )
                raw = read_all(sock)
            assert call(f"{base}/healthz")[0] == 200
            assert _in_flight(base) == 1  # still held: every refusal above came while it was
        assert _requests_4xx(base) - before == 6
    for status, answer in refused:
        assert status == 429 and answer["error"]["type"] == "Overloaded", answer
    assert raw.startswith(b"HTTP/1.1 429") and b"retry-after: 1\r\n" in raw.lower()


def test_a_key_at_its_share_of_the_slots_in_flight_is_refused_while_others_are_served() -> None:
    """max_in_flight 4 gives one API key at most 2 slots (half): while key A's two evaluations
    hold them, A's queries are refused 429 at once, naming the key's share, and key B's are
    answered. (Before, one key flooding the server took every slot: 72% of another caller's
    requests answered 2xx in loadtests.attack's flood-1024-connections.)"""
    keys = json.dumps(["key-a", "key-b"])
    env = {"EMBEDDING_SERVICE_MAX_IN_FLIGHT": "4", "EMBEDDING_SERVICE_API_KEYS": keys}
    url_of = "{}/v1/tables/minilm/neighbors".format
    with server_process(env) as (_, base), holding_the_only_slot(base, 2, key="key-a"):
        refused = call(url_of(base), {"token": "king", "k": 1}, {"authorization": "Bearer key-a"})
        served = [
            call(url_of(base), {"token": word, "k": 1}, {"authorization": "Bearer key-b"})
            for word in ("king", "queen", "man")
        ]
        assert _in_flight(base) == 2  # still held: the refusal came while they were
    status, answer = refused
    assert status == 429 and answer["error"]["type"] == "Overloaded", answer
    assert "requests in flight for one API key is at its limit of 2" in answer["error"]["message"]
    assert [status for status, _ in served] == [200, 200, 200], served


def test_a_connection_refused_at_the_in_flight_limit_is_not_read_for_its_retry_after() -> None:
    """A client that resends a refused request at once (as wrk does) waits out the Retry-After
    it was given before its connection is read again, so a flood of resends cannot take the
    CPU the admitted requests need; a client that honours Retry-After loses nothing."""
    env = {"EMBEDDING_SERVICE_MAX_IN_FLIGHT": "1", "EMBEDDING_SERVICE_RETRY_AFTER_SECONDS": "2"}
    body = b'{"token": "king"}'
    query = (
        b"POST /v1/tables/minilm/neighbors HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    with server_process(env) as (_, base), connect(base) as client, holding_the_only_slot(base):
        client.sendall(query)
        assert client.recv(65536).startswith(b"HTTP/1.1 429")
        sent = time.monotonic()
        client.sendall(query)  # resent at once, on the same connection
        client.settimeout(10)
        again = client.recv(65536)
        waited = time.monotonic() - sent
    assert again.startswith(b"HTTP/1.1 ")
    assert waited >= 1.5, f"read again after {waited:.2f} s, before its Retry-After of 2 s"


def test_a_client_that_does_not_read_gets_no_further_work_done() -> None:
    """Pipelined requests behind an answer the client has not read are not started until it
    reads: none of them is computed and left holding an in-flight slot meanwhile."""
    env = {"EMBEDDING_SERVICE_SEND_TIMEOUT_SECONDS": "30"}
    lookup = json.dumps({"ids": list(range(2000, 2256))}).encode()  # ~2 MB of JSON floats
    request = (
        b"POST /v1/tables/minilm/lookup HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(lookup), lookup)
    )
    with server_process(env) as (_, base):
        host, port = base.removeprefix("http://").split(":")
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((host, int(port)))
            sock.sendall(request * 8)
            time.sleep(3)  # answers pile up until the client's window and buffers are full
            assert _in_flight(base) == 0
            sock.settimeout(30)
            answers, tail = 0, b""
            while answers < 8:  # reading lets the rest go on
                chunk = sock.recv(1 << 20)
                assert chunk, f"closed after {answers} answers"
                window = tail + chunk  # a status line split between two reads counted once
                answers += window.count(b"HTTP/1.1 200")
                tail = window[-11:]


def _in_flight(base: str) -> float:
    prefix = "embedding_service_http_requests_in_flight "
    lines = [line for line in _metrics(base).splitlines() if line.startswith(prefix)]
    return float(lines[0].removeprefix(prefix)) if lines else 0.0


def _requests_4xx(base: str) -> float:
    prefix = (
        'embedding_service_http_requests_total{method="POST",route="/v1/tables/{table}/neighbors",'
        'status_class="4xx"} '
    )
    lines = [line for line in _metrics(base).splitlines() if line.startswith(prefix)]
    return float(lines[0].removeprefix(prefix)) if lines else 0.0


def test_clients_that_never_read_their_answers_are_cut_off() -> None:
    """40 connections pipeline large lookups and never read: past max_stalled_connections the
    longest-stalled ones are cut at once, the rest after send_timeout; the server keeps
    answering, and a client that reads gets its large answers whole."""
    env = {
        "EMBEDDING_SERVICE_MAX_STALLED_CONNECTIONS": "8",
        "EMBEDDING_SERVICE_SEND_TIMEOUT_SECONDS": "8",
    }
    body = json.dumps({"ids": list(range(2000, 2256))}).encode()  # ~2 MB of JSON floats
    request = (
        b"POST /v1/tables/minilm/lookup HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    with server_process(env) as (_, base), ExitStack() as stack:
        host, port = base.removeprefix("http://").split(":")
        stalled = []
        for _ in range(40):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((host, int(port)))
            stack.enter_context(sock)
            sock.sendall(request * 4)
            stalled.append(sock)
        deadline = time.monotonic() + 6
        while closed_for(base, "stalled_limit") < 40 - 8 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert closed_for(base, "stalled_limit") >= 40 - 8
        status, answer = call(f"{base}/v1/tables/minilm/lookup", {"ids": list(range(256))})
        assert status == 200 and len(answer["items"]) == 256
        time.sleep(9)
        cut = closed_for(base, "stalled_limit") + closed_for(base, "send_timeout")
        assert cut >= 40
        assert call(f"{base}/healthz")[0] == 200


def resident_bytes(server: str) -> float:
    """The server's resident memory, from its own process metrics."""
    prefix = "process_resident_memory_bytes "
    return float(
        next(x for x in _metrics(server).splitlines() if x.startswith(prefix))[len(prefix) :]
    )


def test_endless_trailers_without_a_key_cost_the_server_no_memory(server: str) -> None:
    """The audit's no-key out-of-memory: GET /healthz chunked, then trailers that never end.

    The first trailers go in the head's write: a head read alone is answered at once (/healthz
    takes no body: 200, and the connection closed unread), which holds no memory either but
    would leave the trailers' refusal untested."""
    before = resident_bytes(server)
    with connect(server) as sock:
        trailers = b"".join(b"t%d: %s\r\n" % (i, b"v" * 200) for i in range(300))
        sock.sendall(
            b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n"
            + trailers
        )
        sent = len(trailers)
        try:
            while sent < 64 * 1024 * 1024:
                sock.sendall(trailers)
                sent += len(trailers)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = read_all(sock)
    assert answer.startswith(b"HTTP/1.1 400") and b'"type":"TrailersRefused"' in answer
    assert sent < 8 * 1024 * 1024
    assert resident_bytes(server) - before < 16 * 1024 * 1024
    assert call(f"{server}/healthz")[0] == 200

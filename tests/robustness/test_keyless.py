"""What a client without a key can do with bodies it declares, withholds or streams, with
connections that never send a body, and with methods: each against a real server process with
API keys, over raw sockets (loadtests/keyless.py runs the same at the audit's sizes)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress

import pytest

from loadtests.keyless import METHODS
from tests.conftest import small_vectors
from tests.robustness.conftest import write_table
from tests.robustness.servers import call, server_process
from tests.robustness.test_connections import closed_for, connect, read_all

pytestmark = pytest.mark.slow

KEY = "a-key"
BODY_LIMIT = 1024 * 1024
NEIGHBORS = "/v1/tables/small/neighbors"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The small table with an API key, a body budget of two bodies, a body deadline long
    enough for the minimum rate to act first, and 256 descriptors."""
    table = write_table(tmp_path_factory.mktemp("keyless") / "tables", small_vectors())
    env = {
        "EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(table)}]),
        "EMBEDDING_SERVICE_API_KEYS": json.dumps([KEY]),
        "EMBEDDING_SERVICE_MAX_BODY_BYTES": str(BODY_LIMIT),
        "EMBEDDING_SERVICE_MAX_BODY_BYTES_IN_FLIGHT": str(2 * BODY_LIMIT),
        "EMBEDDING_SERVICE_BODY_TIMEOUT_SECONDS": "30",
        "EMBEDDING_SERVICE_CACHE_BYTES": "0",
    }
    with server_process(env, open_files=256) as (_, base):
        yield base


def query(base: str) -> int:
    return call(f"{base}{NEIGHBORS}", {"token": "king", "k": 1}, bearer())[0]


def bearer() -> dict[str, str]:
    return {"authorization": f"Bearer {KEY}"}


def head(path: str, framing: str, key: bool = True, method: str = "POST") -> bytes:
    auth = f"Authorization: Bearer {KEY}\r\n" if key else ""
    return (
        f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{auth}"
        f"{framing}\r\n\r\n"
    ).encode()


def test_declared_bodies_reserve_nothing_of_the_budget(server: str) -> None:
    """Four connections declaring the largest body, twice the budget, and sending none: the
    budget counts bytes received, so a query still gets through (not 429)."""
    with ExitStack() as stack:
        for _ in range(4):
            sock = stack.enter_context(connect(server))
            sock.sendall(head(NEIGHBORS, f"Content-Length: {BODY_LIMIT}"))
        time.sleep(0.3)
        assert [query(server) for _ in range(3)] == [200] * 3


@pytest.mark.parametrize(("method", "status"), [("POST", 405), ("GET", 200)])
def test_a_body_for_a_route_that_takes_none_is_never_read(
    server: str, method: str, status: int
) -> None:
    """POST or GET /healthz declaring 4 MiB: answered at once as if no body came, unread, and
    the connection closed (the body is never waited for or counted)."""
    with connect(server) as sock:
        sock.sendall(head("/healthz", "Content-Length: 4194304", key=False, method=method))
        answer = read_all(sock, 5)
    assert answer.startswith(f"HTTP/1.1 {status}".encode()), answer[:200]
    assert b"connection: close" in answer.lower()
    assert not answer.endswith(b"<still open>")


@pytest.mark.parametrize("framing", ["Transfer-Encoding: chunked", "Content-Length: 1000000000000"])
def test_a_refusal_closes_a_connection_whose_body_is_still_coming(
    server: str, framing: str
) -> None:
    """Without a key: 401 with the connection closing, and the rest of the body, sent on and
    on, is dropped for a moment (so the answer is not lost to a reset) and then cut off,
    instead of being read to its end (a chunked body, or a terabyte declared)."""
    chunk = b"10\r\n" + b"a" * 16 + b"\r\n" if "chunked" in framing else b"a" * 22
    sent = 0
    with connect(server) as sock:
        sock.sendall(head(NEIGHBORS, framing, key=False) + chunk)
        answer = sock.recv(65536)
        with suppress(BrokenPipeError, ConnectionResetError):
            while sent < 64 * 2**20:
                sock.sendall(chunk * 1000)
                sent += len(chunk) * 1000
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert b"connection: close" in answer.lower()
    assert sent < 64 * 2**20  # cut off long before: the body was not read on


def test_a_body_slower_than_the_minimum_rate_gets_408(server: str) -> None:
    """10 of 100 bytes, then nothing: once the grace has passed its rate is under the minimum
    (1 KiB/s by default), and it is refused long before its 30 s deadline."""
    before = closed_for(server, "body_rate")
    with connect(server) as sock:
        sock.sendall(head(NEIGHBORS, "Content-Length: 100") + b'{"token": ')
        answer = read_all(sock, 15)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b'"type":"BodyTooSlow"' in answer
    assert closed_for(server, "body_rate") == before + 1


def test_bodiless_heads_past_the_connection_bound_make_room_for_probes(server: str) -> None:
    """More connections than descriptors allow, each with a whole head and no body: to make
    room the server closes the slowest of the oldest bodies, so probes still get in."""
    before = closed_for(server, "connection_limit")
    with ExitStack() as stack:
        for _ in range(300):
            try:
                sock = stack.enter_context(connect(server))
                sock.sendall(head(NEIGHBORS, "Content-Length: 100"))
            except OSError:
                continue  # reset while the server made room: the point of the test
        time.sleep(0.3)
        assert [call(f"{server}/healthz")[0] for _ in range(5)] == [200] * 5
        assert query(server) == 200
    assert closed_for(server, "connection_limit") > before


def test_methods_no_route_takes_share_one_series(server: str) -> None:
    """Every method llhttp parses, on routes and on unknown paths: /metrics labels only the
    methods each route takes, and everything else as one 'unmatched' route, method 'other'."""
    paths = ["/v1/tables", "/v1/tables/small", NEIGHBORS, "/v1/limits", "/nothing", "/explorer"]
    for method in METHODS:
        for path in paths:
            with connect(server) as sock:
                sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                sock.settimeout(5)
                with suppress(TimeoutError, ConnectionResetError):
                    sock.recv(65536)
    with connect(server) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        text = read_all(sock).decode()
    labels = set(re.findall(r'_http_requests_total\{method="([^"]+)",route="([^"]+)"', text))
    assert {method for method, _ in labels} <= {"GET", "HEAD", "POST", "other"}, labels
    assert ("other", "unmatched") in labels
    assert all(route != "unmatched" or method == "other" for method, route in labels)

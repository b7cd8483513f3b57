"""Graceful shutdown of the real server: SIGTERM turns readiness 503 first, in-flight requests
finish, and the process exits within drain + the configured timeout."""

from __future__ import annotations

import signal
import socket
import time
import urllib.error
from contextlib import ExitStack
from urllib.parse import urlsplit

import pytest

from tests.robustness.conftest import counted_while_running
from tests.robustness.servers import call, server_process

pytestmark = pytest.mark.slow

DRAIN = 1.5
TIMEOUT = 3
ENV = {
    "EMBEDDING_SERVICE_DRAIN_SECONDS": str(DRAIN),
    "EMBEDDING_SERVICE_SHUTDOWN_TIMEOUT_SECONDS": str(TIMEOUT),
    # Bodies held back on purpose past the drain: no minimum rate cuts them first.
    "EMBEDDING_SERVICE_MIN_BODY_BYTES_PER_SECOND": "0",
}
QUERY = {"vector": [0.01 * i for i in range(384)], "k": 10}


def test_sigterm_under_load_fails_no_accepted_request() -> None:
    """Clients stop once readiness says 503, as a load balancer would; none of theirs fails."""
    with server_process(ENV) as (process, base):
        url = f"{base}/v1/tables/minilm/neighbors"

        def client() -> list[str]:
            try:
                return [str(call(url, QUERY)[0])]
            except OSError as error:
                return [f"failed: {error}"]

        with counted_while_running(client, 8) as outcomes:
            time.sleep(1.0)
            signalled = time.monotonic()
            process.send_signal(signal.SIGTERM)
            while call(f"{base}/readyz")[0] == 200:
                time.sleep(0.02)
            unready_after = time.monotonic() - signalled
        exit_code = process.wait(timeout=DRAIN + TIMEOUT + 10)
        stopped_after = time.monotonic() - signalled
    assert unready_after < 0.5
    assert set(outcomes) == {"200"} and outcomes["200"] > 50, outcomes
    assert exit_code in (0, -signal.SIGTERM)
    assert DRAIN <= stopped_after < DRAIN + TIMEOUT + 3


def test_an_in_flight_request_finishes_and_a_stuck_one_cannot_hold_the_exit() -> None:
    body = b'{"token": "king", "k": 1}'
    with ExitStack() as stack:
        process, base = stack.enter_context(server_process(ENV))
        finishing = stack.enter_context(open_request(base, body))  # headers sent, body not yet
        stuck = stack.enter_context(open_request(base, body))  # will never send its body
        process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        time.sleep(DRAIN + 0.5)  # past the drain: the listener is closed now
        with pytest.raises(urllib.error.URLError):
            call(f"{base}/healthz")
        finishing.sendall(body)
        answer = read_all(finishing).decode()
        exit_code = process.wait(timeout=DRAIN + TIMEOUT + 10)
        stopped_after = time.monotonic() - signalled
        stuck.close()
    assert answer.startswith("HTTP/1.1 200"), answer
    assert '"kings"' in answer
    assert exit_code in (0, -signal.SIGTERM)
    # The stuck request is cancelled at the timeout rather than holding the process.
    assert DRAIN + TIMEOUT - 0.5 < stopped_after < DRAIN + TIMEOUT + 3


def open_request(base: str, body: bytes) -> socket.socket:
    """A connection whose request headers are sent and whose body is still to come."""
    address = urlsplit(base)
    connection = socket.create_connection((address.hostname, address.port), timeout=30)
    connection.sendall(
        b"POST /v1/tables/minilm/neighbors HTTP/1.1\r\nHost: x\r\n"
        b"Content-Type: application/json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
    )
    time.sleep(0.2)  # let the server read the headers, so the request is in flight
    return connection


def read_all(connection: socket.socket) -> bytes:
    """The response, read until the server closes the connection."""
    parts = []
    while part := connection.recv(65536):
        parts.append(part)
    return b"".join(parts)

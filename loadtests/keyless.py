"""Attacks that need no key: what any client that can reach the port can send.

Each is sized as the audit of 2026-12-06 ran it against a server in a 1 GiB memory cgroup with
1,024 file descriptors; the harness (loadtests/attack.py) judges the server by its health,
memory and a probe client, and these attacks raise Refuted for what the probe cannot see.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from loadtests.attacks import Attack, Refuted, Target, closed_by_server, read_answer

HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: attack\r\n\r\n"
# llhttp's request methods: each one a request line the parser accepts.
METHODS = (
    "DELETE", "GET", "HEAD", "POST", "PUT", "CONNECT", "OPTIONS", "TRACE", "COPY", "LOCK",
    "MKCOL", "MOVE", "PROPFIND", "PROPPATCH", "SEARCH", "UNLOCK", "BIND", "REBIND", "UNBIND",
    "ACL", "REPORT", "MKACTIVITY", "CHECKOUT", "MERGE", "M-SEARCH", "NOTIFY", "SUBSCRIBE",
    "UNSUBSCRIBE", "PATCH", "PURGE", "MKCALENDAR", "LINK", "UNLINK", "QUERY",
)  # fmt: skip
# An attack that runs for the seconds it is given.
Timed = Callable[[Target, float], str]
# The series /metrics may hold after every attack (the audit saw 20,487 after 1,054 requests).
MOST_SERIES = 2_000


def pipelined_requests(connections: int, count: int, reading: bool, hold: bool = True) -> Timed:
    """`connections` clients, each writing `count` pipelined GET /healthz in one write on a
    connection and holding it for the attack without reading a byte; with `reading`, each
    reads its answers as they come, and writes again on a new connection whenever the
    server closes one; without `hold`, each closes its connection once written, unread, and
    writes again on a new one at once."""
    load = HEALTHZ * count

    def once(target: Target, deadline: float) -> None:
        with target.connect() as sock:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            reader = None
            if reading:
                reader = threading.Thread(target=_drain, args=(sock, deadline), daemon=True)
                reader.start()
            with contextlib.suppress(OSError):
                sock.sendall(load)
            if reader is not None:
                reader.join(max(0.0, deadline - time.monotonic()))
            elif hold:  # held, unread, whatever the server does with it
                time.sleep(max(0.0, deadline - time.monotonic()))

    def run(target: Target, seconds: float) -> str:
        opened = _sustained(connections, seconds, lambda deadline: once(target, deadline))
        sent = opened * count * len(HEALTHZ)
        return f"{opened} connections of {count:,} pipelined /healthz ({sent / 2**20:.0f} MiB)"

    return run


def _sustained(clients: int, seconds: float, client: Callable[[float], None]) -> int:
    """`clients` threads calling client(deadline) again and again for `seconds`; the calls."""
    deadline = time.monotonic() + seconds
    calls = [0] * clients

    def loop(number: int) -> None:
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                client(deadline)
            calls[number] += 1

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(loop, range(clients)))
    return sum(calls)


def _drain(sock: socket.socket, deadline: float) -> None:
    with contextlib.suppress(OSError):
        while time.monotonic() < deadline and sock.recv(1 << 16):
            pass


def declared_bodies(count: int) -> Timed:
    """`count` connections declaring a 4 MiB body to an open route and never sending it."""
    head = b"POST /healthz HTTP/1.1\r\nHost: attack\r\nContent-Length: 4194304\r\n\r\n"
    return _held(count, head)


def bodiless_heads(count: int) -> Timed:
    """`count` connections with a complete query head (Content-Length: 100) and no body."""
    head = (
        b"POST /v1/tables/minilm/neighbors HTTP/1.1\r\nHost: attack\r\n"
        b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n"
    )
    return _held(count, head)


def _held(count: int, head: bytes) -> Timed:
    """`count` connections that each send `head` and then nothing, kept at `count` for the
    attack: one the server closes is opened again."""

    def run(target: Target, seconds: float) -> str:
        deadline = time.monotonic() + seconds
        opened, refused = 0, 0
        held: list[socket.socket] = []
        try:
            while time.monotonic() < deadline:
                for sock in [sock for sock in held if closed_by_server(sock)]:
                    sock.close()
                    held.remove(sock)
                for _ in range(count - len(held)):
                    try:
                        sock = target.connect()
                        sock.sendall(head)
                        held.append(sock)
                        opened += 1
                    except OSError:
                        refused += 1
                time.sleep(0.5)
        finally:
            for sock in held:
                sock.close()
        return f"{opened} opened over the attack, {refused} refused, {count} held at a time"

    return run


def bodies_after_refusal(connections: int, chunked: bool) -> Timed:
    """`connections` clients POSTing to a query route without a key, their bodies streamed as
    fast as the server reads them (chunked in 16-byte chunks, or under a 1 TB Content-Length),
    on a new connection whenever the server closes one. Refuted if the server read more than
    64 MiB of one body it had refused."""
    most = 64 * 2**20
    framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: 1000000000000"
    head = (
        b"POST /v1/tables/minilm/neighbors HTTP/1.1\r\nHost: attack\r\n"
        b"Content-Type: application/json\r\n" + framing + b"\r\n\r\n"
    )
    piece = (b"10\r\n" + b"a" * 16 + b"\r\n") * 4096 if chunked else b"a" * 65536
    largest = [0]

    def once(target: Target, deadline: float) -> None:
        sent = 0
        with target.connect() as sock:
            sock.settimeout(5)
            try:
                sock.sendall(head)
                while sent < most and time.monotonic() < deadline:
                    sock.sendall(piece)
                    sent += len(piece)
            finally:
                largest[0] = max(largest[0], sent)

    def run(target: Target, seconds: float) -> str:
        opened = _sustained(connections, seconds, lambda deadline: once(target, deadline))
        if largest[0] >= most:
            raise Refuted(f"the server read {most // 2**20} MiB of a refused body")
        return f"{opened} connections, at most {largest[0] / 2**20:.1f} MiB sent on one"

    return run


def method_labels(rounds: int) -> Timed:
    """Every method llhttp parses on every route and a few unknown paths, `rounds` times over;
    Refuted if /metrics then holds more than MOST_SERIES series."""
    paths = ["/healthz", "/readyz", "/metrics", "/v1/tables", "/v1/tables/minilm",
             "/v1/tables/minilm/neighbors", "/v1/limits", "/explorer", "/", "/nothing-here",
             "/v1/admin/tables", "/docs", "/openapi.json", "/v1/tables/minilm/lookup",
             "/v1/tables/minilm/analogy", "/v1/tables/minilm/similarity"]  # fmt: skip

    def run(target: Target, seconds: float) -> str:
        sent = 0
        for _ in range(rounds):
            for method in METHODS:
                for path in paths:
                    request = f"{method} {path} HTTP/1.1\r\nHost: attack\r\n\r\n".encode()
                    with contextlib.suppress(OSError), target.connect() as sock:
                        sock.sendall(request)
                        sock.settimeout(0.2)  # some methods are never answered: no wait
                        read_answer(sock)
                    sent += 1
        started = time.perf_counter()
        with target.connect() as sock:
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: attack\r\n\r\n")
            status, text = read_answer(sock)
        scrape = time.perf_counter() - started
        series = sum(1 for line in text.splitlines() if line and not line.startswith(b"#"))
        if status != 200 or series > MOST_SERIES:
            raise Refuted(f"/metrics {status}: {series:,} series after {sent:,} requests")
        return f"{sent:,} requests, then {series:,} series; a scrape {scrape * 1000:.0f} ms"

    return run


def catalogue(seconds: float) -> list[Attack]:
    """The keyless attacks, each lasting about `seconds`."""

    def timed(run: Timed) -> Callable[[Target], str]:
        return lambda target: run(target, seconds)

    return [
        Attack("pipelined-healthz-48x20000", timed(pipelined_requests(48, 20_000, False))),
        Attack("pipelined-read-32x20000", timed(pipelined_requests(32, 20_000, True))),
        Attack(
            "pipelined-close-48x20000", timed(pipelined_requests(48, 20_000, False, hold=False))
        ),
        Attack("declared-bodies-x9", timed(declared_bodies(9))),
        Attack("bodiless-heads-x950", timed(bodiless_heads(950))),
        Attack("chunks-after-401-x8", timed(bodies_after_refusal(8, chunked=True))),
        Attack("terabyte-after-401-x1", timed(bodies_after_refusal(1, chunked=False))),
        Attack("method-labels-x34", timed(method_labels(1))),
    ]

"""The attacks of issue 10, each from one hostile but authenticated client, bounded in time.

Every attack talks to 127.0.0.1 only and returns a short note of what it did and saw; the
harness (loadtests/attack.py) judges the server by its health, memory and a probe client.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.workloads import default_vocabulary, random_vectors, vector_bodies
from benchmarks.wrk import run_wrk

# Whole-word tokens of the default table, for well-formed queries.
WORDS = [t for t in default_vocabulary().tokens[2000:] if t.isalpha()][:6000]


@dataclass(frozen=True)
class Target:
    """Where the server listens and the keys a (hostile) client holds."""

    port: int
    api_key: str
    admin_key: str
    tables: Path

    def connect(self) -> socket.socket:
        """A new connection to the server."""
        return socket.create_connection(("127.0.0.1", self.port), timeout=30)

    def request(
        self, path: str, body: bytes, key: str | None = None, method: str = "POST"
    ) -> bytes:
        """Raw HTTP/1.1 request bytes with the API key (or `key`)."""
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: attack\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {key or self.api_key}\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    def call(self, path: str, body: bytes, key: str | None = None) -> tuple[int, bytes]:
        """Send one request on a new connection and read the answer: (status, body)."""
        with self.connect() as sock:
            sock.sendall(self.request(path, body, key))
            return read_answer(sock)


@dataclass(frozen=True)
class Attack:
    """A named attack: run(target) -> a note."""

    name: str
    run: Callable[[Target], str]


def read_answer(sock: socket.socket) -> tuple[int, bytes]:
    """One HTTP answer (Content-Length framed); status 0 if the connection closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return 0, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = next(
        (int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
         if line.startswith(b"content-length:")),
        0,
    )  # fmt: skip
    while len(body) < length:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        body += chunk
    return status, body


def repeat(target: Target, seconds: float, clients: int, make: Callable[[int], bytes], path: str):
    """`clients` threads posting make(i) bodies for `seconds`; a Counter of statuses."""
    statuses: Counter[int] = Counter()
    deadline = time.monotonic() + seconds

    def client(number: int) -> None:
        i = number
        while time.monotonic() < deadline:
            try:
                statuses[target.call(path, make(i))[0]] += 1
            except OSError:
                statuses[-1] += 1
            i += clients

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    return statuses


def summary(statuses: Counter[int]) -> str:
    return ", ".join(f"{status or 'closed'}: {n}" for status, n in sorted(statuses.items()))


# --- 1: the most expensive queries the limits allow --------------------------------------


def analogy_batches(method: str, seconds: float) -> Callable[[Target], str]:
    """Batches of 16-term analogies with 1,000 exclusions each, as many as max_results allows."""

    def run(target: Target) -> str:
        def body(i: int) -> bytes:
            queries = []
            for q in range(16 if method == "mul" else 256):
                start = (i * 97 + q * 31) % (len(WORDS) - 1100)
                terms = WORDS[start : start + 16]
                query = {
                    "positive": terms[:8] if method == "add" else terms,
                    "negative": terms[8:] if method == "add" else [],
                    "method": method,
                    "k": 128,
                    "exclude": WORDS[start + 16 : start + 1016],
                }
                queries.append(query)
            return json.dumps({"queries": queries}).encode()

        return summary(repeat(target, seconds, 4, body, "/v1/tables/minilm/analogy"))

    return run


def neighbour_batches(seconds: float) -> Callable[[Target], str]:
    """Batches of 256 distinct token queries at the results limit (the largest answers)."""

    def run(target: Target) -> str:
        def body(i: int) -> bytes:
            start = (i * 256) % (len(WORDS) - 256)
            queries = [{"token": w, "k": 128} for w in WORDS[start : start + 256]]
            return json.dumps({"queries": queries}).encode()

        return summary(repeat(target, seconds, 8, body, "/v1/tables/minilm/neighbors"))

    return run


def unrelated_evaluations(seconds: float) -> Callable[[Target], str]:
    """/evaluate with max_evaluation_questions (20,000) analogies of unrelated words: the most
    expensive evaluation the limits allow (about 18 s each on the shared 2-core machine)."""

    def run(target: Target) -> str:
        def body(i: int) -> bytes:
            lines = [
                " ".join(WORDS[(i * 7919 + q * 4 + j * 1543) % len(WORDS)] for j in range(4))
                for q in range(20_000)
            ]
            return json.dumps({"analogies": ": unrelated\n" + "\n".join(lines)}).encode()

        return summary(repeat(target, seconds, 3, body, "/v1/tables/minilm/evaluate"))

    return run


def new_reference_patterns(seconds: float) -> Callable[[Target], str]:
    """/diagnostics with a new pattern each time (never cached), catastrophic for a
    backtracking engine, at the largest page."""

    def run(target: Target) -> str:
        def body(i: int) -> bytes:
            pattern = f"^(##|[a-z]+)+{chr(97 + i % 26)}$"
            return json.dumps({"reference": {"pattern": pattern}, "limit": 1000}).encode()

        return summary(repeat(target, seconds, 4, body, "/v1/tables/minilm/diagnostics"))

    return run


def drifts_at_limits(seconds: float) -> Callable[[Target], str]:
    """/drift at its limits on a checkpoint set the size of the default table (added through
    the admin route): every row of both versions compared, the 1,000 rows moved most and
    least, and 32 tokens' k=512 neighbour lists at each version (a view of checkpoint 0 with
    its own index), alternating with the same against another table (minilm)."""

    def run(target: Target) -> str:
        spec = json.dumps({"name": RUN, "checkpoints": str(target.tables / RUN)}).encode()
        added, _ = target.call("/v1/admin/tables", spec, target.admin_key)

        def body(i: int) -> bytes:
            start = (i * 32) % (len(WORDS) - 32)
            tokens = WORDS[start : start + 32]
            source = 0 if i % 2 == 0 else "minilm"
            query = {"from": source, "tokens": tokens, "k": 512, "limit": 1000}
            return json.dumps(query).encode()

        statuses = repeat(target, seconds, 3, body, f"/v1/tables/{RUN}/drift")
        return f"table added: {added}; {summary(statuses)}"

    return run


# --- 2: the cache --------------------------------------------------------------------------


def padded_queries(seconds: float) -> Callable[[Target], str]:
    """Small token queries padded with whitespace to nearly the body limit, all distinct."""

    def run(target: Target) -> str:
        def body(i: int) -> bytes:
            query = json.dumps({"token": WORDS[i % len(WORDS)], "k": 10 + i % 50}).encode()
            return query + b" " * (4 * 2**20 - len(query) - 16)

        return summary(repeat(target, seconds, 8, body, "/v1/tables/minilm/neighbors"))

    return run


# --- 3 and 4: connections ----------------------------------------------------------------


def held_connections(count: int, send: Callable[[Target], bytes], seconds: float):
    """`count` connections that each send `send(target)` and then nothing, held `seconds`."""

    def run(target: Target) -> str:
        opened, refused = [], 0
        deadline = time.monotonic() + seconds
        with contextlib.ExitStack() as stack:
            for _ in range(count):
                try:
                    sock = stack.enter_context(target.connect())
                    sock.sendall(send(target))
                    opened.append(sock)
                except OSError:
                    refused += 1
            time.sleep(max(0.0, deadline - time.monotonic()))
            closed = sum(1 for sock in opened if _closed_by_server(sock))
        return f"{len(opened)} opened, {refused} refused, {closed} closed by the server"

    return run


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed `sock` (after whatever it answered)."""
    sock.setblocking(False)
    try:
        while sock.recv(1 << 20):
            pass
        return True  # end of stream
    except BlockingIOError:
        return False  # open, nothing more to read
    except OSError:
        return True


def slow_body(target: Target) -> bytes:
    return target.request("/v1/tables/minilm/neighbors", b'{"token": "king"}' + b" " * 83)[:-95]


def half_head(target: Target) -> bytes:
    return b"POST /v1/tables/minilm/neighbors HTTP/1.1\r\nHost: attack\r\n"


def huge_headers(seconds: float) -> Callable[[Target], str]:
    """Four connections at once, each sending a 32 MiB header."""

    def one(target: Target) -> str:
        with target.connect() as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: attack\r\nX-Padding: ")
            sent = 0
            with contextlib.suppress(OSError):
                while sent < 32 * 2**20:
                    sock.sendall(b"a" * 2**20)
                    sent += 2**20
            with contextlib.suppress(OSError):
                status, _ = read_answer(sock)
                return f"{status} after {sent // 2**20} MiB"
            return f"reset after {sent // 2**20} MiB"

    def run(target: Target) -> str:
        with ThreadPoolExecutor(4) as pool:
            return "; ".join(pool.map(one, [target] * 4))

    return run


def unread_answers(seconds: float) -> Callable[[Target], str]:
    """100 connections pipeline four ~2 MB lookups each and never read an answer."""
    lookup = json.dumps({"ids": list(range(2000, 2256))}).encode()

    def send(target: Target) -> bytes:
        return target.request("/v1/tables/minilm/lookup", lookup) * 4

    def run(target: Target) -> str:
        with contextlib.ExitStack() as stack:
            opened = []
            for _ in range(100):
                sock = socket.socket()
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.connect(("127.0.0.1", target.port))
                stack.enter_context(sock)
                sock.sendall(send(target))
                opened.append(sock)
            time.sleep(seconds)
            closed = sum(1 for sock in opened if _closed_by_server(sock))
        return f"100 opened, {closed} cut off by the server"

    return run


def float_bodies(seconds: float) -> Callable[[Target], str]:
    """16 clients sending 4 MiB bodies of JSON floats (a vector far wider than any table)."""
    floats = ", ".join(["0.123456789"] * 340_000)
    body = ('{"vector": [' + floats + "]}").encode()[: 4 * 2**20 - 8]
    body = body[: body.rfind(b",")] + b"]}"

    def run(target: Target) -> str:
        return summary(repeat(target, seconds, 16, lambda i: body, "/v1/tables/minilm/neighbors"))

    return run


# --- 5: the admin route ------------------------------------------------------------------


def prepare(tables: Path) -> None:
    """An admin tables folder holding a model directory whose vocabulary links outside it,
    and a checkpoint set the size of the default table."""
    model = tables / "linked-model"
    model.mkdir(parents=True)
    (model / "vocab.txt").symlink_to("/etc/passwd")
    (model / "model.safetensors").write_bytes(b"not a model")
    write_minilm_run(tables / RUN)


# A checkpoint set of MiniLM's rows and a noisy copy, for the drift attack.
RUN = "minilm-run"


def write_minilm_run(folder: Path) -> None:
    """Checkpoint 0: the default table's rows; checkpoint 1: the same plus Gaussian noise."""
    table = default_vocabulary()
    folder.mkdir(parents=True)
    noise = np.random.default_rng(9).normal(scale=0.02, size=table.vectors.shape)
    vocabulary = "\n".join(table.tokens) + "\n"
    for name, rows in (("0-base", table.vectors), ("1-tuned", table.vectors + noise)):
        np.save(folder / f"{name}.npy", rows.astype(np.float32))
        (folder / f"{name}.vocab").write_text(vocabulary, encoding="utf-8")


def admin_reads(seconds: float) -> Callable[[Target], str]:
    """Add tables from /etc/shadow, /etc/passwd and a model whose vocabulary links outside."""

    def run(target: Target) -> str:
        leaks, statuses = 0, Counter[int]()
        secrets = [line.split(":")[0] for line in Path("/etc/passwd").read_text().splitlines()]
        tables = target.tables
        for spec in (
            {"name": "a", "path": "/etc/shadow", "format": "word2vec-binary"},
            {"name": "b", "path": "/etc/passwd", "format": "glove"},
            {"name": "c", "path": str(tables / "linked-model"), "format": "huggingface"},
        ):
            status, answer = target.call(
                "/v1/admin/tables", json.dumps(spec).encode(), target.admin_key
            )
            statuses[status] += 1
            leaks += any(f"{name}:" in answer.decode("utf-8", "replace") for name in secrets)
        return f"{summary(statuses)}; answers quoting a file: {leaks}"

    return run


# --- 7: a flood ------------------------------------------------------------------------------


def flood(seconds: float) -> Callable[[Target], str]:
    """wrk at 1,024 connections with distinct raw vectors (no cache): ~4x capacity."""
    bodies = vector_bodies(random_vectors(384, 4000, seed=5).round(5))

    def run(target: Target) -> str:
        url = f"http://127.0.0.1:{target.port}/v1/tables/minilm/neighbors"
        key = {"Authorization": f"Bearer {target.api_key}"}
        result = run_wrk(url, 1024, int(seconds), bodies, headers=key)
        return (
            f"wrk {result.requests_per_second:,.0f} answers/s, {result.failures} non-2xx or "
            f"socket errors (429s included)"
        )

    return run


# --- 8: numbers at the edges -------------------------------------------------------------


def extreme_numbers(seconds: float) -> Callable[[Target], str]:
    """Scoring at tiny temperatures and huge vectors, 3CosMul with exponents of 1e6."""

    def run(target: Target) -> str:
        non_finite, statuses = 0, Counter[int]()
        for temperature in (1e-300, 1e-12, 1e-6, 1.0, 1e6):
            for scale in (1e-15, 1.0, 1e15):
                body = {"vector": [scale] * 384, "softmax": True, "temperature": temperature}
                status, answer = target.call("/v1/tables/minilm/score", json.dumps(body).encode())
                statuses[status] += 1
                non_finite += status == 200 and not _all_finite(json.loads(answer))
        for weight in (1e-6, 1.0, 1e6):
            terms = [{"token": "king", "weight": weight}, "woman"]
            body = {"positive": terms, "negative": ["man"], "method": "mul"}
            status, answer = target.call("/v1/tables/minilm/analogy", json.dumps(body).encode())
            statuses[status] += 1
            non_finite += status == 200 and not _all_finite(json.loads(answer))
        return f"{summary(statuses)}; answers with a non-finite number: {non_finite}"

    return run


def _all_finite(value: object) -> bool:
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_all_finite(v) for v in value)
    return value is not None and (not isinstance(value, float) or math.isfinite(value))


def catalogue(seconds: float) -> list[Attack]:
    """Every attack, each lasting about `seconds`."""
    return [
        Attack("3cosmul-16-term-batches", analogy_batches("mul", seconds)),
        Attack("3cosadd-256-query-batches", analogy_batches("add", seconds)),
        Attack("largest-answers", neighbour_batches(seconds)),
        Attack("evaluations-20000-unrelated", unrelated_evaluations(seconds)),
        Attack("diagnostics-new-patterns", new_reference_patterns(seconds)),
        Attack("drifts-at-limits", drifts_at_limits(seconds)),
        Attack("padded-cache-keys", padded_queries(seconds)),
        Attack("json-float-bodies", float_bodies(seconds)),
        Attack("slow-bodies-x400", held_connections(400, slow_body, seconds)),
        Attack("huge-headers-4x32MiB", huge_headers(seconds)),
        Attack("half-sent-heads-x2000", held_connections(2000, half_head, seconds)),
        Attack("unread-answers-x100", unread_answers(seconds)),
        Attack("admin-reads-files", admin_reads(seconds)),
        Attack("flood-1024-connections", flood(seconds)),
        Attack("extreme-numbers", extreme_numbers(seconds)),
    ]

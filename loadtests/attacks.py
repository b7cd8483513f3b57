"""The attacks of the catalogue (the keyless ones are loadtests/keyless.py), each from one
hostile client, bounded in time.

Every attack talks to 127.0.0.1 only and returns a short note of what it did and saw; the
harness (loadtests/attack.py) judges the server by its health, memory and a probe client.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.edges import EdgeServer
from harness.refusals import invalid_bodies
from harness.workloads import default_vocabulary, random_vectors, vector_bodies
from harness.wrk import run_wrk
from service.config import Settings

# Whole-word tokens of the default table, for well-formed queries.
WORDS = [t for t in default_vocabulary().tokens[2000:] if t.isalpha()][:6000]


@dataclass(frozen=True)
class Target:
    """Where the server listens, the keys a (hostile) client holds, and how to start the same
    server with `n` workers of its own (harness/edges.py)."""

    port: int
    api_key: str
    admin_key: str
    tables: Path
    workers: Callable[[int], AbstractContextManager[EdgeServer]]

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


class Refuted(Exception):
    """The attack saw the server fail in a way the probe cannot (raised with what it saw)."""


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
            closed = sum(1 for sock in opened if closed_by_server(sock))
        return f"{len(opened)} opened, {refused} refused, {closed} closed by the server"

    return run


def closed_by_server(sock: socket.socket) -> bool:
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
            closed = sum(1 for sock in opened if closed_by_server(sock))
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


# --- 9: bytes before the body, validation cost, workers, reloads, files --------------------


def _stream_until_refused(target: Target, head: bytes, piece: bytes, most: int) -> str:
    """Send `head`, then `piece` again and again until the server stops reading or `most`
    bytes are sent; what was sent and what the server answered."""
    sent = 0
    with target.connect() as sock:
        sock.settimeout(5)
        with contextlib.suppress(OSError):
            sock.sendall(head)
            while sent < most:
                sock.sendall(piece)
                sent += len(piece)
        with contextlib.suppress(OSError):
            status, _ = read_answer(sock)
            return f"{status or 'closed'} after {sent / 2**20:.1f} MiB"
    return f"reset after {sent / 2**20:.1f} MiB"


def _stream_attack(name: str, head: Callable[[Target], bytes], piece: bytes) -> Callable:
    """Four connections at once, each streaming up to 64 MiB of `piece` after `head`; Refuted
    if any got that far (a bound that held refuses in its first MiB or so)."""
    most = 64 * 2**20

    def run(target: Target) -> str:
        with ThreadPoolExecutor(4) as pool:
            notes = list(pool.map(lambda t: _stream_until_refused(t, head(t), piece, most),
                                  [target] * 4))  # fmt: skip
        if any(f"after {most / 2**20:.1f} MiB" in note for note in notes):
            raise Refuted(f"{name}: the server read 64 MiB: {'; '.join(notes)}")
        return "; ".join(notes)

    return run


def endless_trailers(seconds: float) -> Callable[[Target], str]:
    """No key: GET /healthz chunked, a one-byte body, then trailer lines that never end."""
    head = (
        b"GET /healthz HTTP/1.1\r\nHost: attack\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"1\r\na\r\n0\r\n"
    )
    line = b"t: " + b"x" * 200 + b"\r\n"
    return _stream_attack("trailers", lambda target: head, line * 256)


def pipelined_head(seconds: float) -> Callable[[Target], str]:
    """A full neighbours request, then a second request's head that never ends, pipelined."""

    def head(target: Target) -> bytes:
        first = target.request("/v1/tables/minilm/neighbors", b'{"token": "king", "k": 1000}')
        return first + b"GET /healthz HTTP/1.1\r\nHost: attack\r\nX-Padding: "

    return _stream_attack("pipelined head", head, b"a" * 65536)


def chunk_extensions(seconds: float) -> Callable[[Target], str]:
    """A chunked body of one-byte chunks, each with a 4 KiB chunk extension."""

    def head(target: Target) -> bytes:
        return (
            b"POST /v1/tables/minilm/neighbors HTTP/1.1\r\nHost: attack\r\n"
            b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            b"Authorization: Bearer " + target.api_key.encode() + b"\r\n\r\n"
        )

    return _stream_attack("chunk extensions", head, (b"1;e=" + b"x" * 4096 + b"\r\n \r\n") * 16)


def worst_invalid_bodies(seconds: float) -> Callable[[Target], str]:
    """Two clients looping the costliest refusal of every operation (benchmarks.worst_case),
    each checked to be refused with its status, or shed with 429 when the bodies held at once
    pass their budget (two 4 MiB bodies and the probe's can); each must get its own status at
    least once."""
    bodies = invalid_bodies(Settings())

    def run(target: Target) -> str:
        statuses: Counter[int] = Counter()
        wrong: list[str] = []
        refused: set[str] = set()
        deadline = time.monotonic() + seconds

        def client(start: int) -> None:
            i = start
            while time.monotonic() < deadline or i < start + len(bodies):
                name, path, body, expected = bodies[i % len(bodies)]
                status, _ = target.call(f"/v1/tables/minilm/{path}", body)
                statuses[status] += 1
                if status == expected:
                    refused.add(name)
                elif status != 429:
                    wrong.append(f"{name}: {status}, not {expected}")
                i += 1

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(client, range(2)))
        never = [name for name, *_ in bodies if name not in refused]
        if wrong or never:
            raise Refuted("; ".join(sorted(set(wrong)) + [f"{n}: only shed" for n in never]))
        return f"{len(bodies)} bodies, {summary(statuses)}"

    return run


def reload_churn(seconds: float) -> Callable[[Target], str]:
    """The default table reloaded through the admin route every 0.25 s, under the probe."""

    def run(target: Target) -> str:
        statuses: Counter[int] = Counter()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            path = "/v1/admin/tables/minilm/reload"
            statuses[target.call(path, b"", target.admin_key)[0]] += 1
            time.sleep(0.25)
        if set(statuses) != {200}:
            raise Refuted(f"reloads answered {summary(statuses)}")
        return f"{statuses[200]} reloads"

    return run


def served_file_rewrites(seconds: float) -> Callable[[Target], str]:
    """A table added from a file, then that file rewritten in place with the same bytes,
    truncated, emptied and restored while it is served and reloaded (every writer the README
    calls safe for a source file); the table answers from its loaded rows throughout."""

    def run(target: Target) -> str:
        name = "rewritten"
        source = target.tables / RUN / "0-base.npy"
        served = target.tables / f"{name}.npy"
        shutil.copyfile(source, served)
        shutil.copyfile(source.with_suffix(".vocab"), served.with_suffix(".vocab"))
        spec = {
            "name": name,
            "path": str(served),
            "format": "npy",
        }
        status, answer = target.call(
            "/v1/admin/tables", json.dumps(spec).encode(), target.admin_key
        )
        if status not in (201, 409):  # 409: added by an earlier round, served on
            raise Refuted(f"adding the table: {status} {answer[:200]!r}")
        original = source.read_bytes()
        query = json.dumps({"token": "king", "k": 5}).encode()
        path = f"/v1/tables/{name}/neighbors"
        expected = target.call(path, query)
        statuses: Counter[int] = Counter()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for rewrite in (lambda: served.write_bytes(original),  # in place, same bytes
                            lambda: os.truncate(served, len(original) // 2),
                            lambda: os.truncate(served, 0),
                            lambda: served.write_bytes(original)):  # fmt: skip
                rewrite()
                if target.call(path, query) != expected:
                    raise Refuted("the table's answer changed while its file was rewritten")
                reload = target.call(f"/v1/admin/tables/{name}/reload", b"", target.admin_key)
                statuses[reload[0]] += 1
        return f"reloads over each state: {summary(statuses)}; answers unchanged"

    return run


def worker_kills(seconds: float) -> Callable[[Target], str]:
    """A 2-worker server of its own, behind the same edge: kill -9 a worker, then its
    replacement as soon as it has started; a probe of its own asks /healthz every 50 ms
    throughout and must always be answered (the other worker serves), and both slots must be
    filled again at the end."""

    def run(target: Target) -> str:
        server = contextlib.ExitStack()
        edge = server.enter_context(target.workers(2))
        port = edge.port
        # Refused: nothing accepted the connection (the port was not served). Cut: a request
        # in flight on the worker that was killed, which no server can save.
        refused, cut, answered, running = [0], [0], [0], threading.Event()
        running.set()

        def probe() -> None:
            while running.is_set():
                try:
                    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: probe\r\n\r\n")
                        ok = read_answer(sock)[0] == 200
                        answered[0] += ok
                        cut[0] += not ok
                except ConnectionRefusedError:
                    refused[0] += 1
                except OSError:
                    cut[0] += 1
                time.sleep(0.05)

        thread = threading.Thread(target=probe, daemon=True)
        thread.start()
        try:
            killed = [min(edge.workers(), key=_started)]  # then its replacement
            for _ in range(2):
                os.kill(killed[-1], signal.SIGKILL)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    replacements = set(edge.workers()) - set(killed)
                    if len(replacements) == 2:
                        break
                    time.sleep(0.05)
                if len(replacements) < 2:
                    raise Refuted(f"{len(replacements)} workers 30 s after a kill; server "
                                  f"running: {edge.running()}")  # fmt: skip
                killed.append(max(replacements, key=_started))
            killed.pop()  # the last replacement lives
            # The port is served by the other worker meanwhile; the replacements back off.
            # Then both slots filled again, by the same two workers for 3 s.
            deadline = time.monotonic() + max(seconds, 15)
            seen, since = (), time.monotonic()
            while time.monotonic() < deadline:
                workers = tuple(edge.workers())
                if workers != seen:
                    seen, since = workers, time.monotonic()
                elif len(workers) == 2 and time.monotonic() - since >= 3:
                    break
                time.sleep(0.2)
            alive = edge.running()
            workers = len(edge.workers()) if alive else 0
        finally:
            running.clear()
            thread.join()
            server.close()
        note = (
            f"killed {len(killed)} workers; probe {answered[0]} answered, {cut[0]} cut in "
            f"flight, {refused[0]} refused"
        )
        if not alive or refused[0] or cut[0] > len(killed) or workers != 2:
            raise Refuted(f"{note}; supervisor alive: {alive}, workers at the end: {workers}")
        return note

    return run


def _started(pid: int) -> int:
    """When process `pid` started, in clock ticks since boot (0 if it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return 0


# --- 10: analysis floods -----------------------------------------------------------------


def abandoned_evaluations(count: int, seconds: float) -> Callable[[Target], str]:
    """`count` built-in evaluations (30 bytes each) on connections of their own, all closed
    unread once every one is sent; then, for `seconds`, a neighbours query every 100 ms, of
    which at least 95% must be answered 200 (analyses wait in a queue of their own)."""
    evaluate = b'{"builtin": "questions-words"}'
    query = json.dumps({"token": "king", "k": 5}).encode()

    def run(target: Target) -> str:
        sent = 0
        with contextlib.ExitStack() as stack:
            for _ in range(count):
                with contextlib.suppress(OSError):
                    sock = stack.enter_context(target.connect())
                    sock.sendall(target.request("/v1/tables/minilm/evaluate", evaluate))
                    sent += 1
            time.sleep(0.5)  # read by the server, then abandoned
        statuses: Counter[int] = Counter()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                statuses[target.call("/v1/tables/minilm/neighbors", query)[0]] += 1
            except OSError:
                statuses[-1] += 1
            time.sleep(0.1)
        note = f"{sent} evaluations sent and abandoned; neighbours {summary(statuses)}"
        if statuses[200] < 0.95 * sum(statuses.values()):
            raise Refuted(note)
        return note

    return run


# Run by CI in short too (tests/integration/test_attacks.py).
ABANDONED_EVALUATIONS = "abandoned-evaluations-x300"


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
        Attack(ABANDONED_EVALUATIONS, abandoned_evaluations(300, seconds)),
        *framing_and_lifecycle(seconds),
    ]


def framing_and_lifecycle(seconds: float) -> list[Attack]:
    """Framing, the costliest refusals, reloads, served files and workers; CI runs them in
    short (tests/integration/test_attacks.py)."""
    return [
        Attack("endless-trailers-no-key", endless_trailers(seconds)),
        Attack("pipelined-endless-head", pipelined_head(seconds)),
        Attack("chunk-extensions", chunk_extensions(seconds)),
        Attack("worst-invalid-bodies", worst_invalid_bodies(seconds)),
        Attack("reload-churn", reload_churn(seconds)),
        Attack("served-file-rewrites", served_file_rewrites(seconds)),
        Attack("worker-kills", worker_kills(seconds)),
    ]

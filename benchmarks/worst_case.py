"""The most expensive request the default limits allow, for every operation, on the default table.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.worst_case [--runs 3]

In-process through the real app (its lifespan running: batchers, one BLAS thread), each request
sent straight to the ASGI app, so what is measured is the server's side only: wall time from
the request to the last byte of the answer (median of --runs), the peak of memory allocated
while answering (tracemalloc, which sees numpy's allocations; the request body is built before),
and the answer's size, after one warm-up request. Every request is one the limits accept (the
script checks the status).

Then the invalid bodies: for each operation, the costliest refusal a body of max_body_bytes can
ask for (lists of a million bad items, of a million empty objects, one bad item short of a
bound), each checked to be refused with its expected status. The whole request is answered on
the event loop, so its time is the loop's.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

from harness.machine import machine
from harness.refusals import invalid_bodies, listed_questions
from service.api.app import create_app
from service.config import Settings
from service.loading.tables import load_registry

TABLE = "/v1/tables/minilm"


def requests(settings: Settings, words: list[str], far: str) -> list[tuple[str, str, Any]]:
    """(name, path, body) of each operation's worst case within the default limits (`far`:
    the row least like "king", every other row closer)."""
    rng = np.random.default_rng(0)
    batch, terms, exclude = settings.max_batch, settings.max_terms, settings.max_exclude
    k_batch = settings.max_results // batch  # 128: max_results over a full batch

    def b64() -> str:
        return base64.b64encode(rng.normal(size=384).astype("<f4").tobytes()).decode()

    def excluded(i: int) -> list[str]:
        start = (i * 37) % (len(words) - exclude)
        return words[start : start + exclude]

    def analogy(i: int, method: str) -> dict[str, Any]:
        chosen = words[(i * 53) % (len(words) - terms) :][:terms]
        half = terms // 2 if method == "add" else terms
        return {
            "positive": chosen[:half],
            "negative": chosen[half:],
            "method": method,
            "k": k_batch if method == "add" else settings.max_k,
            "exclude": excluded(i),
        }

    def floats() -> list[float]:
        return [round(float(x), 7) for x in rng.normal(size=384)]

    def weighted(i: int) -> dict[str, Any]:
        chosen = words[(i * 53) % (len(words) - terms) :][:terms]
        return {"positive": [{"token": w, "weight": 2.0} for w in chosen[: terms // 2]],
                "negative": [{"token": w, "weight": 0.5} for w in chosen[terms // 2 :]],
                "k": k_batch}  # fmt: skip

    # JSON floats as terms: as many 384-float vectors as max_body_values admits, two a query.
    vector_queries = min(batch, settings.max_body_values // (2 * 384) - 1)
    mul_queries = settings.max_directions // terms  # 16 queries of 16 terms: 256 directions
    punctuation = "".join(rng.choice(list("!?.,;:()[]"), settings.max_text_length))
    questions = ": random\n" + "\n".join(
        " ".join(rng.choice(words, 4)) for _ in range(settings.max_evaluation_questions)
    )
    return [
        ("neighbors: 1 vector, k=1000, 1000 exclusions", "neighbors",
         {"vector_b64": b64(), "k": settings.max_k, "exclude": excluded(0)}),
        ("neighbors: 256 vectors, k=128, 1000 exclusions each", "neighbors",
         {"queries": [{"vector_b64": b64(), "k": k_batch, "exclude": excluded(i)}
                      for i in range(batch)]}),
        ("analogy add: 256 x 16 terms, k=128, 1000 exclusions", "analogy",
         {"queries": [analogy(i, "add") for i in range(batch)]}),
        ("analogy add: 256 x 16 weighted term objects, k=128", "analogy",
         {"queries": [weighted(i) for i in range(batch)]}),
        (f"analogy add: {vector_queries} x 2 vectors as JSON floats, k=128", "analogy",
         {"queries": [{"positive": [{"vector": floats()}], "negative": [{"vector": floats()}],
                       "k": k_batch} for _ in range(vector_queries)]}),
        ("analogy mul: 16 x 16 terms, k=1000, 1000 exclusions", "analogy",
         {"queries": [analogy(i, "mul") for i in range(mul_queries)]}),
        ("similarity: matrix of 256 tokens", "similarity",
         {"tokens": words[: settings.max_matrix_tokens]}),
        ("similarity: 256 pairs", "similarity",
         {"pairs": [[words[i], words[i + 1]] for i in range(batch)]}),
        ("score: k=1000, softmax, target", "score",
         {"vector_b64": b64(), "k": settings.max_k, "softmax": True, "target": words[0]}),
        ("cosines: 3CosMul of 16 terms, every row (16 directions)", "cosines",
         {"positive": words[:terms], "negative": [], "method": "mul"}),
        ("cosines: 16 vector terms as JSON floats, every row", "cosines",
         {"positive": [{"vector": floats()} for _ in range(terms)]}),
        ("rank: 256 others, one pass", "rank", {"token": "king", "others": words[:batch]}),
        ("rank: the farthest row, closer_rows of max_results", "rank",
         {"token": "king", "others": [far], "closer_rows": {}}),
        ("lookup: 256 ids with vectors (JSON floats)", "lookup",
         {"ids": list(range(2000, 2000 + batch))}),
        ("lookup: 256 ids with vectors (base64)", "lookup",
         {"ids": list(range(2000, 2000 + batch)), "encoding": "base64"}),
        ("projection: 20,000 points", "projection",
         {"points": settings.max_projection_points}),
        ("project: 256 raw vectors", "project", {"vectors_b64": [b64() for _ in range(batch)]}),
        ("tokenize: 10,000 punctuation characters", "tokenize", {"text": punctuation}),
        ("diagnostics: a new pattern, 1,000 suspects", "diagnostics",
         {"reference": {"pattern": "^##[a-z]{5,}$"}, "limit": settings.max_diagnostics_limit}),
        ("evaluate: 20,000 analogy questions", "evaluate", {"analogies": questions}),
        ("evaluate: 20,000 questions listed (out of vocabulary)", "evaluate",
         listed_questions(settings)),
        ("trajectory: 5,000 rows (a table of one checkpoint)", "trajectory",
         {"points": settings.max_trajectory_points}),
        ("drift: against a table, 1,000 rows each way, 32 x k=512", "drift",
         {"from": "minilm", "tokens": words[: settings.max_drift_tokens], "limit":
          settings.max_drift_limit, "k": settings.max_results // (2 * settings.max_drift_tokens)}),
    ]  # fmt: skip


class Driver:
    """Sends requests straight to the app's ASGI callable and collects the answer."""

    def __init__(self, app: Any, table: str = TABLE) -> None:
        self.app = app
        self.table = table

    async def post(self, path: str, body: bytes) -> tuple[int, int]:
        """(status, answer bytes)."""
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": f"{self.table}/{path}",
            "raw_path": f"{self.table}/{path}".encode(), "query_string": b"", "root_path": "",
            "headers": [(b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode())],
            "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2), "state": {},
        }  # fmt: skip
        sent = False
        status, size = 0, 0

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = message["status"]
            else:
                size += len(message.get("body", b""))

        await self.app(scope, receive, send)
        return status, size


class LoopWatch:
    """The longest the event loop went without running a ready task while it is watched: a
    task that sleeps 0.5 ms and measures how late it wakes. A search answered in a thread
    leaves the loop free; parsing and validating a body on it does not."""

    def __init__(self) -> None:
        self.longest = 0.0
        self.task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        while True:
            started = time.perf_counter()
            await asyncio.sleep(0.0005)
            self.longest = max(self.longest, time.perf_counter() - started - 0.0005)

    async def __aenter__(self) -> LoopWatch:
        self.task = asyncio.create_task(self._tick())
        await asyncio.sleep(0)  # let it start
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self.task is not None
        self.task.cancel()


async def measure(
    driver: Driver, path: str, body: bytes, runs: int, expected: int = 200
) -> tuple[float, float, int, int]:
    """(median seconds, median longest loop block, peak bytes, answer bytes) after one warm-up
    request (the first pays for fresh memory and thread pools); fails if the answer's status
    is not `expected`."""
    await driver.post(path, body)
    times, blocks = [], []
    for _ in range(runs):
        async with LoopWatch() as watch:
            started = time.perf_counter()
            status, size = await driver.post(path, body)
            times.append(time.perf_counter() - started)
        blocks.append(watch.longest)
        if status != expected:
            raise SystemExit(f"{path}: status {status}, not {expected}")
    tracemalloc.start()
    await driver.post(path, body)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times), statistics.median(blocks), peak, size


async def run(runs: int, only: Callable[[str], bool], invalid_only: bool = False) -> None:
    settings = Settings()
    registry = load_registry(settings)
    app = create_app(settings, registry)
    table = registry.get("minilm").table
    words = [t for t in table.tokens[2000:] if t.isalpha()][:20_000]
    rows = table.vectors.astype(np.float64)
    far = table.tokens[int(np.argmin(rows @ rows[table.token_to_id["king"]] / table.norms64))]
    driver = Driver(app)
    async with app.router.lifespan_context(app):
        header = f"{'time':>9} {'loop':>8} {'peak memory':>12} {'answer':>9}"
        print(f"{'request':<55} {header}")
        for name, path, body in requests(settings, words, far):
            if invalid_only or not only(name):
                continue
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            count = 1 if path == "evaluate" else runs
            seconds, block, peak, size = await measure(driver, path, data, count)
            row(name, seconds, block, peak, size, f"body {len(data) / 2**20:.2f} MB")
        print(f"{'invalid body (max_body_bytes)':<55} {header}")
        for name, path, data, expected in invalid_bodies(settings):
            if not only(name):
                continue
            seconds, block, peak, size = await measure(driver, path, data, runs, expected)
            row(name, seconds, block, peak, size, f"{expected}, body {len(data) / 2**20:.2f} MB")


def row(name: str, seconds: float, block: float, peak: int, size: int, note: str) -> None:
    print(
        f"{name:<55} {seconds * 1000:7.0f} ms {block * 1000:5.0f} ms {peak / 2**20:9.1f} MB "
        f"{size / 2**20:6.2f} MB  ({note})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--invalid-only", action="store_true", help="only the invalid bodies, not the requests"
    )
    parser.add_argument("--only", help="run the requests whose name contains this")
    args = parser.parse_args()
    print(f"command: python -m benchmarks.worst_case {' '.join(sys.argv[1:])}".rstrip())
    load = os.getloadavg()[0]
    print(f"machine: {machine()}, load average {load:.1f}; default settings")
    only = args.only

    asyncio.run(run(args.runs, lambda name: only is None or only in name, args.invalid_only))


if __name__ == "__main__":
    main()

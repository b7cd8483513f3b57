"""Soak: a fixed request rate for a long time against the real server, watching for drift.

Reports, per 30 s window: requests, errors, p50 and p99 latency (measured from each request's
scheduled send time, so a stall is not hidden by the client waiting), and the server's RSS.
Passes with zero errors and RSS growth after warm-up (the first window) under 5%.

    flock /tmp/embedding-bench.lock .venv/bin/python -m loadtests.soak            # 10 minutes
    .venv/bin/python -m loadtests.soak --seconds 60 --rate 100                     # a short look
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np
import psutil

from harness.machine import machine
from harness.server import running_server
from harness.workloads import (
    default_vocabulary,
    google_analogies,
    random_vectors,
    zipf_tokens,
)

WORKERS = 16
MAX_RSS_GROWTH = 0.05


@dataclass
class Window:
    """What happened in one reporting window."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    rss_bytes: int = 0


def request_mix(count: int) -> list[tuple[str, bytes]]:
    """(path, body) pairs: neighbours by token and vector, analogy, similarity, lookup, score."""
    table = default_vocabulary()
    tokens = zipf_tokens(table, count * 2, seed=11)
    vectors = random_vectors(table.width, count, seed=12).round(5)
    analogies = google_analogies(table)
    mix = []
    for i in range(count):
        a, b, c, _ = analogies[i % len(analogies)]
        kind = i % 6
        body: dict = [
            {"token": tokens[i], "k": 10},
            {"vector": vectors[i].tolist(), "k": 10},
            {"positive": [b, c], "negative": [a], "k": 5},
            {"pairs": [[tokens[i], tokens[count + i]]]},
            {"tokens": [tokens[i], tokens[count + i]], "include_vector": True},
            {"vector": vectors[i].tolist(), "k": 5, "softmax": True},
        ][kind]
        path = ["neighbors", "neighbors", "analogy", "similarity", "lookup", "score"][kind]
        mix.append((f"/v1/tables/minilm/{path}", json.dumps(body).encode()))
    return mix


class Soak:
    """Sends `rate` requests a second on WORKERS keep-alive connections for `seconds`."""

    def __init__(self, base: str, rate: float, seconds: float, window: float) -> None:
        self.address = urlsplit(base)
        self.rate = rate
        self.seconds = seconds
        self.window = window
        self.requests = request_mix(2000)
        self.windows: list[Window] = [Window() for _ in range(int(seconds // window) + 1)]
        self.schedule: Iterator[int] = itertools.count()
        self.lock = threading.Lock()
        self.started = 0.0

    def run(self, server: psutil.Process) -> list[Window]:
        """Run the load; sample the server's RSS at the end of every window."""
        self.started = time.monotonic() + 0.5
        workers = [threading.Thread(target=self._work, daemon=True) for _ in range(WORKERS)]
        for worker in workers:
            worker.start()
        for index, window in enumerate(self.windows[:-1]):
            time.sleep(max(0.0, self.started + (index + 1) * self.window - time.monotonic()))
            window.rss_bytes = server.memory_info().rss
            report(index, window, self.window)
        for worker in workers:
            worker.join()
        return self.windows[:-1]

    def _work(self) -> None:
        connection = http.client.HTTPConnection(self.address.hostname, self.address.port, 30)
        while True:
            with self.lock:
                number = next(self.schedule)
            due = self.started + number / self.rate
            if due - self.started >= self.seconds:
                return
            time.sleep(max(0.0, due - time.monotonic()))
            path, body = self.requests[number % len(self.requests)]
            ok = self._send(connection, path, body)
            finished = time.monotonic()
            window = self.windows[int((due - self.started) // self.window)]
            with self.lock:
                window.latencies.append(finished - due)
                window.errors += not ok

    def _send(self, connection: http.client.HTTPConnection, path: str, body: bytes) -> bool:
        try:
            connection.request("POST", path, body, {"content-type": "application/json"})
            response = connection.getresponse()
            response.read()
            return response.status == 200
        except (OSError, http.client.HTTPException):
            connection.close()
            return False


def report(index: int, window: Window, seconds: float) -> None:
    """One line per window."""
    latencies = np.array(window.latencies) * 1000
    p50, p99 = np.percentile(latencies, [50, 99]) if latencies.size else (0.0, 0.0)
    print(
        f"{index * seconds:6.0f}-{(index + 1) * seconds:<4.0f}s  requests {latencies.size:6d}  "
        f"errors {window.errors:3d}  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
        f"rss {window.rss_bytes / 2**20:7.1f} MiB",
        flush=True,
    )


def server_process() -> psutil.Process:
    """The server started by running_server: this process's child running `service serve`."""
    for child in psutil.Process().children(recursive=True):
        if "serve" in child.cmdline():
            return child
    raise RuntimeError("no server process found")


def main() -> int:
    """Run the soak and print the verdict; exit 1 if it failed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=200, help="requests per second")
    parser.add_argument("--seconds", type=float, default=600, help="how long to run")
    parser.add_argument("--window", type=float, default=30, help="seconds per report line")
    args = parser.parse_args()
    print(f"command: python -m loadtests.soak {' '.join(sys.argv[1:])}")
    print(f"machine: {machine()}; rate {args.rate:g}/s for {args.seconds:g} s")
    with running_server() as base:
        windows = Soak(base, args.rate, args.seconds, args.window).run(server_process())
    errors = sum(window.errors for window in windows)
    settled = windows[0].rss_bytes
    growth = (windows[-1].rss_bytes - settled) / settled
    p99s = [float(np.percentile(w.latencies, 99)) * 1000 for w in windows if w.latencies]
    print(
        f"total: {sum(len(w.latencies) for w in windows)} requests, {errors} errors; "
        f"p99 per window {min(p99s):.2f}-{max(p99s):.2f} ms; "
        f"RSS after warm-up {settled / 2**20:.1f} -> {windows[-1].rss_bytes / 2**20:.1f} MiB "
        f"({growth:+.2%})"
    )
    passed = errors == 0 and growth < MAX_RSS_GROWTH
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

"""Overload: wrk at several times the service's capacity; accepted requests must stay fast.

First a capacity run (few connections, nothing shed), then runs with many more connections.
wrk resends at once whatever is refused, so past the bounds the offered rate is several times
what the service can answer. For every run it reports, from the server's own counters, the
requests answered 2xx, shed 429 and failed 5xx, and the p99 of the accepted ones (from the
latency histogram, bucket upper bound), plus the p99 a slow probe client saw for its accepted
requests alongside the flood.

    flock /tmp/embedding-bench.lock .venv/bin/python -m loadtests.overload [--api-key KEY]

With `--api-key`, the server takes that one key and wrk and the probe both send it: one caller
flooding the server, held to its share of the slots in flight (`max_in_flight_per_key`).
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import sys
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np

from harness.machine import machine
from harness.server import running_server
from harness.workloads import random_vectors, vector_bodies
from harness.wrk import WrkResult, run_wrk

CAPACITY_CONNECTIONS = 64
# The verdict, for every run with at least FLOOD times the connections at which the server
# reaches capacity (closed-loop clients that resend every refusal at once): the server still
# accepts ACCEPTED_SHARE of its capacity, and the probe's accepted requests keep a p99 under
# PROBE_P99_MS (before the connection guards: a third of capacity and 15 s waits).
# The flood is counted in connections, not in answered requests: a connection refused at the
# in-flight limit is not read for its Retry-After, so the rate it is answered at no longer
# measures what it attempts.
FLOOD = 4.0
ACCEPTED_SHARE = 0.7
PROBE_P99_MS = 1000.0
ROUTE = "/v1/tables/{table}/neighbors"
PATH = "/v1/tables/minilm/neighbors"
SAMPLE = re.compile(
    r"^embedding_service_http_request_duration_seconds_(bucket|count)\{(.*)\} (\S+)$"
)


@dataclass(frozen=True)
class Run:
    """One wrk run, with what the server counted and what the probe saw."""

    connections: int
    wrk: WrkResult
    answered: dict[str, float]
    accepted_p99_ms: float
    probe_p99_ms: float

    @property
    def seconds(self) -> float:
        """How long wrk ran."""
        return self.wrk.requests / self.wrk.requests_per_second

    @property
    def offered(self) -> float:
        """Requests per second the server answered, whatever the answer."""
        return sum(self.answered.values()) / self.seconds

    @property
    def accepted(self) -> float:
        """Requests per second answered 2xx."""
        return self.answered.get("2xx", 0) / self.seconds

    def problems(self, capacity: float) -> list[str]:
        """Why this run fails the verdict (empty when it passes)."""
        found = []
        if self.answered.get("5xx", 0):
            found.append(f"{self.answered['5xx']:.0f} 5xx")
        if self.connections >= FLOOD * CAPACITY_CONNECTIONS:
            if self.accepted < ACCEPTED_SHARE * capacity:
                found.append(f"accepted {self.accepted / capacity:.0%} of capacity")
            if not self.probe_p99_ms < PROBE_P99_MS:
                found.append(f"probe p99 {self.probe_p99_ms:.0f} ms")
        return found

    def line(self, capacity: float) -> str:
        """A report line; rates relative to the capacity run."""
        seconds, offered = self.seconds, self.offered
        ok, shed, failed = (self.answered.get(k, 0) for k in ("2xx", "4xx", "5xx"))
        return (
            f"{self.connections:5d} conns  offered {offered:8.0f}/s ({offered / capacity:4.1f}x)  "
            f"accepted {ok / seconds:5.0f}/s  shed {shed / (ok + shed + failed):4.0%}  "
            f"5xx {failed:.0f}  server p99 of accepted <= {self.accepted_p99_ms:4.0f} ms  "
            f"wrk p99 (all) {self.wrk.p99_ms:6.0f} ms  probe p99 {self.probe_p99_ms:6.0f} ms"
        )


def scrape(base: str) -> dict[tuple[str, str], float]:
    """The neighbours route's latency histogram: (status class, bucket or 'count') -> value."""
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    samples = {}
    for line in text.splitlines():
        match = SAMPLE.match(line)
        if match and f'route="{ROUTE}"' in match.group(2):
            labels = dict(re.findall(r'(\w+)="([^"]*)"', match.group(2)))
            key = labels.get("le", "count") if match.group(1) == "bucket" else "count"
            samples[(labels["status_class"], key)] = float(match.group(3))
    return samples


def p99_upper_bound(before: dict, after: dict, status_class: str = "2xx") -> float:
    """The p99 of requests counted between two scrapes, as a histogram bucket's upper bound."""
    delta = {key: after[key] - before.get(key, 0.0) for key in after if key[0] == status_class}
    total = delta.get((status_class, "count"), 0.0)
    buckets = sorted((float(le), n) for (_, le), n in delta.items() if le not in ("count", "+Inf"))
    for bound, cumulative in buckets:
        if cumulative >= 0.99 * total:
            return bound * 1000
    return float("inf")


def answered(before: dict, after: dict) -> dict[str, float]:
    """Requests per status class between two scrapes."""
    return {
        cls: after[(cls, "count")] - before.get((cls, "count"), 0.0)
        for cls, key in after
        if key == "count"
    }


class Probe:
    """Sends one request every `interval` seconds on its own connection; times the accepted."""

    def __init__(
        self, base: str, body: bytes, headers: dict[str, str], interval: float = 0.05
    ) -> None:
        self.address = urlsplit(base)
        self.body = body
        self.headers = {"content-type": "application/json", **headers}
        self.interval = interval
        self.latencies: list[float] = []
        self.running = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Probe:
        self.running.set()
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.running.clear()
        self.thread.join()

    def p99_ms(self) -> float:
        """The accepted requests' p99, or nan if none was accepted."""
        return float(np.percentile(self.latencies, 99)) * 1000 if self.latencies else float("nan")

    def _run(self) -> None:
        while self.running.is_set():
            started = time.perf_counter()
            connection = http.client.HTTPConnection(self.address.hostname, self.address.port, 30)
            try:
                connection.request("POST", PATH, self.body, self.headers)
                response = connection.getresponse()
                response.read()
                if response.status == 200:
                    self.latencies.append(time.perf_counter() - started)
            except OSError:
                pass
            finally:
                connection.close()
            time.sleep(max(0.0, self.interval - (time.perf_counter() - started)))


def measure(
    base: str, bodies: list[str], connections: int, seconds: int, headers: dict[str, str]
) -> Run:
    """One wrk run with the probe alongside and the server's counters around it."""
    before = scrape(base)
    with Probe(base, bodies[-1].encode(), headers) as probe:
        result = run_wrk(base + PATH, connections, seconds, bodies, headers)
    after = scrape(base)
    return Run(
        connections, result, answered(before, after), p99_upper_bound(before, after), probe.p99_ms()
    )


def main() -> int:
    """Capacity, then the overload runs; exit 1 if a run fails the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=15, help="seconds per run")
    parser.add_argument(
        "--connections", type=int, nargs="+", default=[256, 512, 1024], help="overload runs"
    )
    parser.add_argument(
        "--open-files", type=int, help="the server's descriptor limit (a container's ulimit)"
    )
    parser.add_argument(
        "--env", action="append", default=[], metavar="VAR=VALUE", help="server settings"
    )
    parser.add_argument("--api-key", help="serve with this one API key, and send it")
    args = parser.parse_args()
    print(f"command: python -m loadtests.overload {' '.join(sys.argv[1:])}")
    print(f"machine: {machine()}; neighbours of distinct random vectors (no cache)")
    bodies = vector_bodies(random_vectors(384, 4000, seed=21).round(5), k=10)
    env = dict(item.split("=", 1) for item in args.env)
    headers = {}
    if args.api_key:
        env.setdefault("EMBEDDING_SERVICE_API_KEYS", json.dumps([args.api_key]))
        headers = {"authorization": f"Bearer {args.api_key}"}
    with running_server(env, open_files=args.open_files) as base:
        run_wrk(base + PATH, 8, 3, bodies, headers)  # warm-up
        # Batches fill better with more concurrency: 64 connections answer the most without
        # anything shed, so that is the capacity.
        capacity = measure(base, bodies, CAPACITY_CONNECTIONS, args.seconds, headers)
        rate = capacity.wrk.requests_per_second
        print(f"capacity ({CAPACITY_CONNECTIONS} connections): {rate:.0f}/s")
        runs = [measure(base, bodies, n, args.seconds, headers) for n in args.connections]
    for run in [capacity, *runs]:
        print(run.line(rate))
    floods = [run for run in runs if run.connections >= FLOOD * CAPACITY_CONNECTIONS]
    problems = [f"{run.connections} conns: {p}" for run in runs for p in run.problems(rate)]
    print(
        f"verdict: no 5xx; at >= {FLOOD:g}x the capacity's connections ({len(floods)} run(s)) "
        f"accepted >= "
        f"{ACCEPTED_SHARE:.0%} of capacity and probe p99 < {PROBE_P99_MS:.0f} ms"
    )
    if not floods:
        problems.append(f"no run with {FLOOD:g}x the capacity's connections: add connections")
    print("PASS" if not problems else "FAIL: " + "; ".join(problems))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())

"""Our own edge beside Granian and HAProxy, each serving the service: CPU a request and p99.

Run (wrk and haproxy from Debian; Granian from PyPI into a folder of its own on first use):
    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.protocol_alternatives \\
        [--rounds 4] [--seconds 8] [--only ours granian haproxy]

The three edges of harness/edges.py (our `serve`; Granian with its limits set; HAProxy,
configured, in front of plain uvicorn) serve the same app on the default table with an API
key, every process with 1,024 file descriptors (the attack harness, `loadtests.attack
--variant`, adds the memory cgroup). All are started before measuring. Per round, GET /healthz
and then distinct raw vectors (neighbours, k=10; each round its own vectors, so no cache
answers one), wrk -t2 -c32 against each edge in turn, the order reversed every other round.
CPU a request is the user and system time of every process of the edge (HAProxy and uvicorn,
Granian's supervisor and worker) over the requests answered. The last lines: each edge's
medians, then each against `ours` paired: the median over the rounds of the ratio within a
round, so drift on the shared machine touches both sides of each ratio alike.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.metadata
import os
import resource
import statistics
import subprocess
import sys
from dataclasses import dataclass

from harness import workloads
from harness.edges import EDGES, GRANIAN, EdgeServer, haproxy, start_edge
from harness.machine import machine
from harness.processes import cpu_seconds
from harness.wrk import WrkResult, run_wrk

CONNECTIONS = 32
KEY = "bench-api-key"
NEIGHBORS = "/v1/tables/minilm/neighbors"
# Distinct vectors a round: more than one edge answers in --seconds (about 2,000 a second).
VECTORS_PER_ROUND = 40_000
SCENARIOS = ("healthz", "vectors")


@dataclass(frozen=True)
class Run:
    """One wrk run and the CPU every process of the edge spent on each request."""

    wrk: WrkResult
    cpu_us: float


def cpu_of(edge: EdgeServer) -> float:
    """CPU seconds spent so far by every process of `edge`."""
    total = 0.0
    for pid in edge.pids():
        with contextlib.suppress(OSError):
            total += cpu_seconds(pid)
    return total


def timed_wrk(edge: EdgeServer, scenario: str, seconds: int, bodies: list[str]) -> Run:
    """wrk against `edge` in `scenario`, with the edge's CPU a request meanwhile."""
    base = f"http://127.0.0.1:{edge.port}"
    before = cpu_of(edge)
    if scenario == "healthz":
        result = run_wrk(f"{base}/healthz", CONNECTIONS, seconds)
    else:
        headers = {"Authorization": f"Bearer {KEY}"}
        result = run_wrk(base + NEIGHBORS, CONNECTIONS, seconds, bodies, headers=headers)
    spent = cpu_of(edge) - before
    return Run(result, spent / max(1, result.requests) * 1e6)


def open_files(count: int = 1024) -> None:
    """In each edge process before exec: the container's descriptor limit."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


def versions() -> str:
    """The versions of what each edge runs on."""
    ours = ", ".join(
        f"{name} {importlib.metadata.version(name)}" for name in ("uvicorn", "httptools", "uvloop")
    )
    proxy = subprocess.run([haproxy(), "-v"], capture_output=True, text=True).stdout.split()[2]
    return f"{ours}, {GRANIAN.replace('==', ' ')}, haproxy {proxy}"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(edges: list[EdgeServer], args: argparse.Namespace) -> dict[str, list[dict]]:
    """Every round: each scenario on every edge, one after the other, the order reversed every
    other round; {edge: [{scenario: Run} per round]}."""
    table = workloads.default_vocabulary()
    vectors = workloads.random_vectors(table.width, VECTORS_PER_ROUND * args.rounds, seed=11)
    results: dict[str, list[dict]] = {edge.name: [] for edge in edges}
    for round_ in range(args.rounds):
        share = vectors[round_ * VECTORS_PER_ROUND : (round_ + 1) * VECTORS_PER_ROUND]
        bodies = workloads.vector_bodies(share)
        order = edges if round_ % 2 == 0 else edges[::-1]
        measured: dict[str, dict[str, Run]] = {edge.name: {} for edge in order}
        print(f"round {round_ + 1} (load {load()})", flush=True)
        for scenario in SCENARIOS:
            for edge in order:
                run = timed_wrk(edge, scenario, args.seconds, bodies)
                measured[edge.name][scenario] = run
                print(f"  {edge.name:>8} {scenario:>8}: {line_of(run)}", flush=True)
        for name, runs in measured.items():
            results[name].append(runs)
    return results


def line_of(run: Run) -> str:
    failed = f", {run.wrk.failures} FAILED" if run.wrk.failures else ""
    return (
        f"{run.wrk.requests_per_second:7,.0f} req/s, p99 {run.wrk.p99_ms:6.1f} ms, "
        f"{run.cpu_us:5.0f} us CPU/request{failed}"
    )


def report(results: dict[str, list[dict]]) -> None:
    """Medians per edge and scenario, then each edge paired against the first."""
    print("\nmedians over the rounds:")
    for name, runs in results.items():
        for scenario in SCENARIOS:
            rate = statistics.median(r[scenario].wrk.requests_per_second for r in runs)
            p99 = statistics.median(r[scenario].wrk.p99_ms for r in runs)
            cpu = statistics.median(r[scenario].cpu_us for r in runs)
            failed = sum(r[scenario].wrk.failures for r in runs)
            note = f", {failed} FAILED" if failed else ""
            print(f"  {name:>8} {scenario:>8}: {rate:7,.0f} req/s, p99 {p99:6.1f} ms, "
                  f"{cpu:5.0f} us CPU/request{note}")  # fmt: skip
    first, *others = results
    for name in others:
        for scenario in SCENARIOS:
            pairs = list(zip(results[first], results[name], strict=True))
            ratio = [o[scenario].cpu_us / f[scenario].cpu_us for f, o in pairs]
            rate = [o[scenario].wrk.requests_per_second / f[scenario].wrk.requests_per_second
                    for f, o in pairs]  # fmt: skip
            p99 = [o[scenario].wrk.p99_ms / f[scenario].wrk.p99_ms for f, o in pairs]
            print(f"paired {name} / {first} {scenario}: {statistics.median(ratio):.2f}x CPU a "
                  f"request, {statistics.median(rate):.2f}x req/s, "
                  f"{statistics.median(p99):.2f}x p99")  # fmt: skip


def main() -> None:
    """Start every edge, measure them in alternation, print each run and the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--only", nargs="*", choices=EDGES, help="edges to run (default: all)")
    args = parser.parse_args()
    print(f"command: python -m benchmarks.protocol_alternatives {' '.join(sys.argv[1:])}")
    now = datetime.datetime.now(datetime.UTC)
    print(f"date: {now:%Y-%m-%d %H:%M} UTC; machine: {machine()}; load before: {load()}")
    print(f"versions: {versions()}; 1,024 file descriptors a process")
    env = {"EMBEDDING_SERVICE_API_KEYS": f'["{KEY}"]'}
    with contextlib.ExitStack() as stack:
        edges = []
        for name in args.only or EDGES:
            edge = start_edge(name, env, open_files)
            stack.callback(edge.stop)
            edges.append(edge)
        report(measure(edges, args))
    print(f"\nload after: {load()}")


if __name__ == "__main__":
    main()

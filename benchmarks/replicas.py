"""One replica and two behind HAProxy, side by side: req/s, CPU a request, p99, PSS and RSS.

Run (haproxy and wrk from Debian, scripts/install-system-deps):
    .venv/bin/python -m benchmarks.replicas --seconds 10 -- --table t=/data/t-prepared

For each count, scripts/replicas starts that many replicas of the options after `--` (give
one prepared table: every replica maps the same pages) behind the proxy; once the proxy has
them all up, wrk sends distinct neighbour queries by vector to the first table for --seconds.
CPU a request is the replicas' and the proxy's CPU time over the run divided by the answers;
PSS shares each mapped page among the processes that map it, RSS counts it in every one.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from deploy.failover_check import (
    CONNECTIONS,
    first_table,
    local_replicas,
    replica_pids,
    vector_bodies,
)
from harness.machine import machine
from harness.processes import child_pids, cpu_seconds, memory_of
from harness.wrk import WrkResult, run_wrk


@dataclass(frozen=True)
class Run:
    """What one replica count did."""

    replicas: int
    load: WrkResult
    replica_cpu_ms: float  # a request
    proxy_cpu_ms: float  # a request
    pss_mib: float  # summed over the replicas
    rss_mib: list[float]  # of each replica


def proxy_pid(supervisor: int) -> int:
    """The supervisor's haproxy process."""
    found = [
        p for p in child_pids(supervisor) if b"haproxy" in Path(f"/proc/{p}/cmdline").read_bytes()
    ]
    return found[0]


def measure(replicas: int, seconds: int, serve: list[str], folder: Path) -> Run:
    """Start `replicas` replicas behind the proxy and load them for `seconds`."""
    with local_replicas(replicas, serve, folder / f"replicas-{replicas}.log") as running:
        service, _, supervisor = running
        table, width = first_table(service)
        pids, proxy = replica_pids(supervisor), proxy_pid(supervisor)
        before = [cpu_seconds(pid) for pid in [*pids, proxy]]
        url = f"{service}/v1/tables/{table}/neighbors"
        load = run_wrk(url, CONNECTIONS, seconds, vector_bodies(width))
        used = [cpu_seconds(pid) - b for pid, b in zip([*pids, proxy], before, strict=True)]
        held = [memory_of(pid) for pid in pids]
    answers = max(load.requests, 1)
    return Run(
        replicas,
        load,
        1000 * sum(used[:-1]) / answers,
        1000 * used[-1] / answers,
        sum(m["pss_mib"] for m in held),
        [m["rss_mib"] for m in held],
    )


def report(runs: list[Run]) -> None:
    """One row a replica count, and two against one."""
    print(f"{'replicas':>8} {'req/s':>8} {'p99 ms':>8} {'CPU ms/req':>10} {'proxy ms/req':>12} "
          f"{'PSS sum MiB':>11} {'RSS each MiB':>14}")  # fmt: skip
    for run in runs:
        rss = ", ".join(f"{value:.0f}" for value in run.rss_mib)
        print(f"{run.replicas:>8} {run.load.requests_per_second:>8.1f} {run.load.p99_ms:>8.1f} "
              f"{run.replica_cpu_ms:>10.2f} {run.proxy_cpu_ms:>12.3f} {run.pss_mib:>11.0f} "
              f"{rss:>14}")  # fmt: skip
    if len(runs) == 2 and runs[0].load.requests_per_second > 0:
        one, two = runs
        rate = two.load.requests_per_second / one.load.requests_per_second
        print(f"two against one: req/s x{rate:.2f}, summed PSS x{two.pss_mib / one.pss_mib:.2f}"
              " of one's (x2 had nothing been shared)")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Measure each replica count in turn and print the table."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=10, help="wrk's run for each count (10)")
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 2], help="(1 2)")
    parser.add_argument("serve", nargs=argparse.REMAINDER, help="-- then serve's options")
    args = parser.parse_args(argv)
    serve = args.serve[1:] if args.serve[:1] == ["--"] else args.serve
    print(f"command: {shlex.join(['python', '-m', 'benchmarks.replicas', *argv])}")
    print(f"machine: {machine()}")
    print(f"load:    wrk, {CONNECTIONS} connections, {args.seconds} s a count, distinct vectors")
    with tempfile.TemporaryDirectory(prefix="replicas-bench-") as folder:
        runs = [measure(n, args.seconds, serve, Path(folder)) for n in args.counts]
    report(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())

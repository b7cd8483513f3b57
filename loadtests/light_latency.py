"""Latency at light load (the soak's mix at a fixed rate), server variants side by side.

    .venv/bin/python -m loadtests.light_latency --variant before=../wt-before --variant after=. \\
        [--rate 200] [--seconds 20] [--rounds 3]

Variants as in benchmarks.ab_http (NAME=DIR[:VAR=VALUE,...]). Every server is started first;
then each round runs the soak's request mix (loadtests/soak.py: all six query kinds over 2,000
distinct requests, latency timed from each request's scheduled send) against each server in
turn, so the machine's drift touches every variant alike. Prints p50 and p99 per run and their
medians.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys

import numpy as np
import psutil

from harness.machine import machine
from harness.server import start_server
from harness.variants import Variant
from loadtests.soak import Soak


def main() -> None:
    """Start every variant, then alternate light-load runs between them."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", action="append", type=Variant.parse, required=True)
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"command: python -m loadtests.light_latency {' '.join(sys.argv[1:])}")
    print(f"machine: {machine()}, load average {os.getloadavg()[0]:.1f}")
    found: dict[str, list[tuple[float, float, int]]] = {v.name: [] for v in args.variant}
    with contextlib.ExitStack() as stack:
        servers = {v.name: start_server(v.env, cwd=v.folder) for v in args.variant}
        for process, _ in servers.values():
            stack.callback(process.kill)
        for round_ in range(args.rounds):
            for name, (process, base) in servers.items():
                soak = Soak(base, args.rate, args.seconds, args.seconds)
                with contextlib.redirect_stdout(open(os.devnull, "w")):
                    [window] = soak.run(psutil.Process(process.pid))
                latencies = np.array(window.latencies) * 1000
                p50, p99 = np.percentile(latencies, [50, 99])
                found[name].append((p50, p99, window.errors))
                print(f"round {round_ + 1} {name}: p50 {p50:.2f} ms  p99 {p99:.2f} ms  "
                      f"errors {window.errors}", flush=True)  # fmt: skip
    print("medians over the rounds:")
    for name, runs in found.items():
        p50 = statistics.median(run[0] for run in runs)
        p99 = statistics.median(run[1] for run in runs)
        print(f"  {name:>12}: p50 {p50:.2f} ms  p99 {p99:.2f} ms  errors {sum(r[2] for r in runs)}")


if __name__ == "__main__":
    main()

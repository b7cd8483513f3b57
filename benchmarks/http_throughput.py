"""HTTP throughput and latency of the hot path, batching and cache on against off, in one run.

Run (wrk from Debian; matplotlib from the `bench` extra for the plot):
    .venv/bin/python -m benchmarks.http_throughput [--seconds 8] [--connections 1 4 16 32 64]

Two servers on the default table, measured one after the other in the same run: the default
configuration, and the same server with batching and the result cache off. wrk (2 threads)
and the server share the machine, as the issue's targets require.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import urllib.request
from dataclasses import asdict
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from benchmarks.engine_throughput import blas_description
from harness import workloads
from harness.machine import machine
from harness.server import running_server
from harness.wrk import WrkResult, run_wrk

NEIGHBORS = "/v1/tables/minilm/neighbors"
ANALOGY = "/v1/tables/minilm/analogy"
OFF = {"EMBEDDING_SERVICE_BATCHING": "false", "EMBEDDING_SERVICE_CACHE_BYTES": "0"}
MAIN_CONNECTIONS = 32


def bodies() -> dict[str, list[str]]:
    """Zipf tokens, distinct vectors and shuffled Google analogy questions."""
    table = workloads.default_vocabulary()
    questions = workloads.google_analogies(table)
    random.Random(0).shuffle(questions)
    return {
        "tokens": workloads.neighbor_bodies(workloads.zipf_tokens(table, 200_000)),
        "vectors": workloads.vector_bodies(workloads.random_vectors(table.width, 25_000)),
        # Thirty rounds of the set, each with a different k: every body distinct. Each run
        # gets its own share (analogy_runs), so the cache cannot help and the comparison shows
        # batching alone (as for vectors); the hit counter is read back to confirm it.
        "analogies": workloads.analogy_bodies(questions, rounds=30),
    }


def measure(base: str, work: dict[str, list[str]], args: argparse.Namespace, on: bool) -> dict:
    """Every scenario against one running server."""
    results: dict[str, dict] = {}

    def record(name: str, path: str, connections: int, payload: list[str] | None) -> None:
        result = run_wrk(base + path, connections, args.seconds, payload)
        results[f"{name}@{connections}"] = asdict(result)
        print(f"  {name:>10} c={connections:<3} {_line(result)}", flush=True)

    run_wrk(base + NEIGHBORS, MAIN_CONNECTIONS, args.warmup, work["vectors"])  # warm-up
    record("healthz", "/healthz", MAIN_CONNECTIONS, None)
    if on:  # the cache warms with Zipf traffic first, as it would in service
        warm = run_wrk(base + NEIGHBORS, MAIN_CONNECTIONS, args.cache_warmup, work["tokens"])
        results["tokens-warmup"] = asdict(warm)
        print(f"  {'warm-up':>10} c={MAIN_CONNECTIONS:<3} {_line(warm)}", flush=True)
    record("tokens", NEIGHBORS, MAIN_CONNECTIONS, work["tokens"])
    hits_before = analogy_cache_hits(base)
    runs = analogy_runs(work["analogies"], len(args.connections))
    for connections, analogies in zip(args.connections, runs, strict=True):
        record("vectors", NEIGHBORS, connections, work["vectors"])
        record("analogies", ANALOGY, connections, analogies)
    results["analogy_cache_hits"] = analogy_cache_hits(base) - hits_before
    return results


def analogy_runs(bodies: list[str], runs: int) -> list[list[str]]:
    """Disjoint shares of the bodies, one per run: wrk starts every run at the same bodies, so
    shared ones would be answered from the cache filled by the runs before."""
    return [bodies[run::runs] for run in range(runs)]


def analogy_cache_hits(base: str) -> int:
    """Analogy answers the server's result cache has served so far, from /metrics."""
    with urllib.request.urlopen(base + "/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(
        int(sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == "embedding_service_cache_lookups_total"
        and sample.labels == {"operation": "analogy", "result": "hit"}
    )


def _line(result: WrkResult) -> str:
    return (
        f"{result.requests_per_second:>9,.0f} req/s  p50 {result.p50_ms:6.2f} ms  "
        f"p99 {result.p99_ms:6.2f} ms  failures {result.failures}"
    )


def summary(on: dict, off: dict) -> list[str]:
    """The issue's four comparisons as lines of text."""
    at = f"@{MAIN_CONNECTIONS}"

    def rate(results: dict, name: str) -> float:
        return float(results[name + at]["requests_per_second"])

    lines = [
        f"tokens / healthz (same server): {rate(on, 'tokens') / rate(on, 'healthz'):.0%}"
        f" (p99 {on['tokens' + at]['p99_ms']:.1f} ms)",
        f"vectors, batching on / off: {rate(on, 'vectors') / rate(off, 'vectors'):.2f}x"
        f" (p99 on {on['vectors' + at]['p99_ms']:.1f} ms)",
        f"analogies, batching on / off: {rate(on, 'analogies') / rate(off, 'analogies'):.2f}x"
        f" (p99 on {on['analogies' + at]['p99_ms']:.1f} ms)",
    ]
    runs = [r for r in [*on.values(), *off.values()] if isinstance(r, dict)]
    failures = sum(r["failures"] for r in runs)
    hits = on["analogy_cache_hits"]
    return [
        *lines,
        f"analogy answers served from the cache (batching on): {hits}",
        f"failed requests in all runs: {failures}",
    ]


def plot(on: dict, off: dict, connections: list[int], path: Path) -> None:
    """Throughput and p99 latency against connections, batching on and off."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (throughput, latency) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, style in (("vectors", "o"), ("analogies", "s")):
        for label, results, line in (("on", on, "-"), ("off", off, "--")):
            rates = [results[f"{name}@{c}"]["requests_per_second"] for c in connections]
            p99s = [results[f"{name}@{c}"]["p99_ms"] for c in connections]
            legend = f"{name}, batching {label}"
            throughput.plot(connections, rates, line, marker=style, label=legend)
            latency.plot(connections, p99s, line, marker=style, label=legend)
    throughput.set(xlabel="connections", ylabel="requests / s", title="Throughput")
    latency.set(xlabel="connections", ylabel="p99 latency (ms)", title="p99 latency")
    for axes in (throughput, latency):
        axes.set_xscale("log", base=2)
        axes.grid(alpha=0.3)
    throughput.legend(fontsize=8)
    figure.suptitle("Default table (30,522 x 384), server and wrk on the same 2 cores")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> None:
    """Measure both servers, print the comparisons, write JSON and the plot."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=int, default=8, help="length of each measured run")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--cache-warmup", type=int, default=15)
    parser.add_argument("--connections", type=int, nargs="+", default=[1, 4, 16, 32, 64])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/http.json"))
    parser.add_argument("--plot", type=Path, default=Path("benchmarks/throughput.png"))
    args = parser.parse_args()
    print(f"command: python -m benchmarks.http_throughput {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {machine()}; {blas_description()}")
    work = bodies()
    results = {}
    for label, env in (("on", {}), ("off", OFF)):
        print(f"server: batching and cache {label}", flush=True)
        with running_server(env) as base:
            results[label] = measure(base, work, args, on=label == "on")
    for line in summary(results["on"], results["off"]):
        print(line)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    plot(results["on"], results["off"], args.connections, args.plot)
    print(f"wrote {args.out} and {args.plot}")


if __name__ == "__main__":
    main()

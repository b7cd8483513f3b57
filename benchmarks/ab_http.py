"""Side-by-side HTTP throughput of server variants (two revisions, or one setting on and off).

Run (wrk from Debian):
    .venv/bin/python -m benchmarks.ab_http --variant before=../wt-before --variant after=. \\
        [--variant "direct-off=.:EMBEDDING_SERVICE_DIRECT_QUERIES=false"] [--rounds 2] \\
        [--connections 32] [--api-key KEY]

A variant is NAME=DIR[:VAR=VALUE,...]: the `service` package in DIR, started with the extra
environment variables. Every variant runs as its own server, all started before measuring;
the measurements alternate between them so the machine's drift touches each alike: in every
round each scenario is measured on every variant, one right after the other, and the variants'
order is reversed every other round (give an even --rounds): measured in a fixed order, the
variant that ran second led in both orders of a two-variant A/B (BENCHMARKS.md). Per
variant and round, at 32 connections: /healthz, then the scenarios: Zipf token neighbours (after
every server's cache has warmed on the same tokens), distinct raw vectors as JSON floats or as
base64 float32 (vectors_b64), and distinct Google-set analogies (each round a disjoint share, the
same for every variant, so no server's cache can answer them and every variant is asked the
same questions; with a share each, the same code had measured 0.88-1.07x itself on
analogies). wrk and the servers share the machine's cores. Beside
throughput, each run reports the server process's CPU time per request (user + system, all
threads, from /proc): it moves far less than throughput when other work shares the machine.
The last lines compare every variant with the first, paired: the median over the rounds of the
two measurements' ratio within the round, req/s and CPU per request. `--connections 8 32 128`
measures every scenario at each of those counts in every round (named `vectors@8` and so on;
/healthz stays at 32), each with its own share of the analogies. `--api-key KEY` serves every
variant with that one API key and sends it with every table request: the path a keyed
deployment takes (the key's check and its share of the in-flight slots).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import sys
from dataclasses import dataclass

from harness import workloads
from harness.machine import machine
from harness.processes import cpu_seconds
from harness.server import start_server
from harness.variants import Variant
from harness.wrk import WrkResult, run_wrk

NEIGHBORS = "/v1/tables/minilm/neighbors"
ANALOGY = "/v1/tables/minilm/analogy"
CONNECTIONS = 32


def scenarios(runs: int) -> dict[str, list[list[str]]]:
    """Per scenario, one list of bodies per run: every variant of an A/B gets a run's bodies
    (each server has its own cache), and the analogies of different runs are disjoint."""
    table = workloads.default_vocabulary()
    questions = workloads.google_analogies(table)
    random.Random(0).shuffle(questions)
    analogies = workloads.analogy_bodies(questions, rounds=30)
    tokens = workloads.neighbor_bodies(workloads.zipf_tokens(table, 200_000))
    random_vectors = workloads.random_vectors(table.width, 25_000)
    vectors = workloads.vector_bodies(random_vectors)
    vectors_b64 = workloads.vector_b64_bodies(random_vectors)
    return {
        "tokens": [tokens] * runs,
        "vectors": [vectors] * runs,
        "vectors_b64": [vectors_b64] * runs,
        "analogies": [analogies[run::runs] for run in range(runs)],
    }


PATHS = {"tokens": NEIGHBORS, "vectors": NEIGHBORS, "vectors_b64": NEIGHBORS, "analogies": ANALOGY}


@dataclass(frozen=True)
class Run:
    """One wrk run and the server's CPU time per request during it."""

    wrk: WrkResult
    cpu_us: float


def timed_wrk(
    pid: int,
    url: str,
    seconds: int,
    bodies: list[str] | None = None,
    connections: int = CONNECTIONS,
    headers: dict[str, str] | None = None,
) -> Run:
    before = cpu_seconds(pid)
    result = run_wrk(url, connections, seconds, bodies, headers)
    spent = cpu_seconds(pid) - before
    return Run(result, spent / max(1, result.requests) * 1e6)


def order_of(variants: int, round_: int) -> list[int]:
    """The variants (by position) in the order round `round_` measures them: reversed every
    other round, so none is measured first more often than another."""
    order = list(range(variants))
    return order[::-1] if round_ % 2 else order


def paired(first: list[dict[str, Run]], other: list[dict[str, Run]], name: str) -> str:
    """`other` against `first` in scenario `name`: the medians over the rounds of the ratios of
    req/s and of CPU per request, both measured in the same round."""
    rates = [o[name].wrk.requests_per_second / f[name].wrk.requests_per_second
             for f, o in zip(first, other, strict=True)]  # fmt: skip
    cpus = [o[name].cpu_us / f[name].cpu_us for f, o in zip(first, other, strict=True)]
    return f"{name} {statistics.median(rates):.2f}x req/s, {statistics.median(cpus):.2f}x CPU"


def main() -> None:
    """Start every variant, measure them in alternation, print each run and the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", action="append", type=Variant.parse, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument(
        "--scenarios",
        nargs="+",
        choices=list(PATHS),
        default=["tokens", "vectors", "analogies"],
        help="vectors_b64: raw vectors as base64 float32 (servers that accept vector_b64)",
    )
    parser.add_argument("--connections", type=int, nargs="+", default=[CONNECTIONS])
    parser.add_argument("--api-key", help="serve with this one API key and send it")
    args = parser.parse_args()
    keyed = {"EMBEDDING_SERVICE_API_KEYS": json.dumps([args.api_key])} if args.api_key else {}
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else None
    print(f"command: python -m benchmarks.ab_http {' '.join(sys.argv[1:])}")
    counts = args.connections
    print(f"machine: {machine()}; connections {counts}")
    work = scenarios(args.rounds * len(counts))
    labels = [
        (scenario, count, scenario if counts == [CONNECTIONS] else f"{scenario}@{count}")
        for scenario in args.scenarios
        for count in counts
    ]
    results: dict[str, list[dict[str, Run]]] = {v.name: [] for v in args.variant}
    with contextlib.ExitStack() as stack:
        servers = {v.name: start_server({**keyed, **v.env}, cwd=v.folder) for v in args.variant}
        for process, _ in servers.values():
            stack.callback(process.kill)
        bases = {name: base for name, (_, base) in servers.items()}
        for base in bases.values():  # warm-up: every server's cache sees its tokens once
            run_wrk(base + NEIGHBORS, CONNECTIONS, 15, work["tokens"][0], headers)
        for round_ in range(args.rounds):
            order = order_of(len(args.variant), round_)
            measured: dict[int, dict[str, Run]] = {number: {} for number in order}
            for scenario, count, label in [("healthz", CONNECTIONS, "healthz"), *labels]:
                for number in order:
                    variant = args.variant[number]
                    pid = servers[variant.name][0].pid
                    if scenario == "healthz":
                        run = timed_wrk(pid, bases[variant.name] + "/healthz", args.seconds)
                    else:
                        bodies = work[scenario][round_ * len(counts) + counts.index(count)]
                        url = bases[variant.name] + PATHS[scenario]
                        run = timed_wrk(pid, url, args.seconds, bodies, count, headers)
                    measured[number][label] = run
            for number in order:
                name = args.variant[number].name
                results[name].append(measured[number])
                print(f"round {round_ + 1} {name}: " + _line(measured[number]), flush=True)
    print("median req/s over the rounds (p99 ms) [server CPU us per request]:")
    for name, runs in results.items():
        print(f"  {name:>12}: " + _medians(runs))
    first, *others = args.variant
    for variant in others:
        print(f"paired, {variant.name} / {first.name}: " + "  ".join(
            paired(results[first.name], results[variant.name], label)
            for label in ["healthz", *(label for _, _, label in labels)]))  # fmt: skip


def _line(result: dict[str, Run]) -> str:
    return "  ".join(
        f"{name} {r.wrk.requests_per_second:,.0f}/s p99 {r.wrk.p99_ms:.1f} ms "
        f"[{r.cpu_us:.0f} us]" + (f" FAILED {r.wrk.failures}" if r.wrk.failures else "")
        for name, r in result.items()
    )


def _medians(runs: list[dict[str, Run]]) -> str:
    parts = []
    for name in runs[0]:
        rate = statistics.median(run[name].wrk.requests_per_second for run in runs)
        p99 = statistics.median(run[name].wrk.p99_ms for run in runs)
        cpu = statistics.median(run[name].cpu_us for run in runs)
        failed = sum(run[name].wrk.failures for run in runs)
        # A variant that fails requests answers faster: a median must not hide it.
        parts.append(
            f"{name} {rate:,.0f} ({p99:.1f}) [{cpu:.0f}]" + (f" FAILED {failed}" if failed else "")
        )
    return "  ".join(parts)


if __name__ == "__main__":
    main()

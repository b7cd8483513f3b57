"""Locust load test of the hot path: a weighted mix of neighbour, analogy and scoring queries.

Inputs are realistic (see workloads.py): Zipf-distributed tokens, distinct raw vectors and
Google analogy questions. SLO thresholds (error ratio, p95, p99) decide the exit code.

Headless: python -m loadtests.run (starts a server, writes CSV + HTML, applies the SLOs).
"""

from __future__ import annotations

import random

import orjson
from locust import FastHttpUser, between, events, task
from locust.env import Environment

from harness import workloads

TABLE = "/v1/tables/minilm"
TOKENS = 20_000
VECTORS = 2_000

_table = workloads.default_vocabulary()
_tokens = workloads.zipf_tokens(_table, TOKENS)
_vectors = [v.tolist() for v in workloads.random_vectors(_table.width, VECTORS)]
_questions = workloads.google_analogies(_table)


@events.init_command_line_parser.add_listener
def _slo_options(parser) -> None:  # type: ignore[no-untyped-def]
    parser.add_argument("--slo-error-ratio", type=float, default=0.0, help="max failure ratio")
    parser.add_argument("--slo-p95-ms", type=float, default=100.0, help="max 95th percentile")
    parser.add_argument("--slo-p99-ms", type=float, default=250.0, help="max 99th percentile")


@events.quitting.add_listener
def _apply_slos(environment: Environment, **_: object) -> None:
    """Set the exit code from the aggregate statistics and print every verdict."""
    total = environment.stats.total
    options = environment.parsed_options
    if total.num_requests == 0 or options is None:
        environment.process_exit_code = 1
        print("SLO: no requests were made")
        return
    checks = {
        "error ratio": (total.fail_ratio, options.slo_error_ratio),
        "p95 ms": (total.get_response_time_percentile(0.95), options.slo_p95_ms),
        "p99 ms": (total.get_response_time_percentile(0.99), options.slo_p99_ms),
    }
    failed = [name for name, (value, limit) in checks.items() if value > limit]
    for name, (value, limit) in checks.items():
        print(f"SLO {name}: {value:.4g} (limit {limit:g}) {'FAIL' if name in failed else 'ok'}")
    environment.process_exit_code = 1 if failed else 0


class HotPathUser(FastHttpUser):
    """One caller of the service; tasks weighted like a typical mix of traffic."""

    wait_time = between(0.0, 0.01)

    def _post(self, path: str, body: dict, name: str) -> None:
        with self.client.post(
            f"{TABLE}/{path}",
            data=orjson.dumps(body),
            headers={"content-type": "application/json"},
            name=name,
            catch_response=True,
        ) as response:
            if response.status_code != 200:
                response.failure(f"{response.status_code}: {response.text[:200]}")

    @task(6)
    def neighbors_of_token(self) -> None:
        self._post("neighbors", {"token": random.choice(_tokens), "k": 10}, "neighbors:token")

    @task(2)
    def neighbors_of_vector(self) -> None:
        self._post("neighbors", {"vector": random.choice(_vectors), "k": 10}, "neighbors:vector")

    @task(2)
    def analogy(self) -> None:
        a, b, c, _ = random.choice(_questions)
        self._post("analogy", {"positive": [b, c], "negative": [a], "k": 10}, "analogy")

    @task(1)
    def score(self) -> None:
        body = {"vector": random.choice(_vectors), "k": 5, "softmax": True}
        self._post("score", body, "score")

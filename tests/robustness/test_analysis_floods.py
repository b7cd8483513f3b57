"""Analyses in their own queue: a flood of them leaves queries answered, what a client abandons
is not computed, a stopping server answers what waits, and a built-in set is evaluated once
per table load."""

from __future__ import annotations

import http.client
import json
import select
import signal
import time
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any
from urllib.parse import urlsplit

import pytest
from prometheus_client import REGISTRY

from service.engine.tables.table import EmbeddingTable
from tests.robustness.conftest import AppFactory
from tests.robustness.servers import call, server_process

EVALUATE = "/v1/tables/minilm/evaluate"
# Polls of a condition the server reaches in milliseconds: a hang guard of about a minute.
POLLS = 1200


@pytest.fixture(scope="module")
def words(minilm: EmbeddingTable) -> list[str]:
    """Whole words of the default table (its first rows are markers and pieces)."""
    return [token for token in minilm.tokens[2000:] if token.isalpha()]


def unrelated_analogies(words: list[str], seed: int, count: int = 20_000) -> dict[str, str]:
    """An /evaluate body of `count` questions of unrelated words: seconds of work."""
    lines = [
        " ".join(words[(seed * 7919 + q * 4 + j * 1543) % len(words)] for j in range(4))
        for q in range(count)
    ]
    return {"analogies": ": unrelated\n" + "\n".join(lines)}


def sent(base: str, path: str, body: dict[str, Any]) -> http.client.HTTPConnection:
    """A connection whose request is sent; its answer is read later, or never."""
    address = urlsplit(base)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=300)
    headers = {"content-type": "application/json"}
    connection.request("POST", path, json.dumps(body), headers)
    return connection


def metric(base: str, name: str, labels: dict[str, str]) -> float:
    """One sample of the server's /metrics (0 when absent)."""
    text = call_text(f"{base}/metrics")
    wanted = name + (
        "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}" if labels else ""
    )
    for line in text.splitlines():
        if line.startswith(wanted + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def call_text(url: str) -> str:
    address = urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.request("GET", address.path)
        return connection.getresponse().read().decode()
    finally:
        connection.close()


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll `condition` (a hang guard, not a time limit under test)."""
    for _ in range(POLLS):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


def outcome(base: str, name: str) -> float:
    return metric(base, "embedding_service_analyses_total", {"kind": "analysis", "outcome": name})


def overloaded(base: str) -> float:
    return metric(base, "embedding_service_errors_total", {"type": "Overloaded"})


@pytest.mark.slow
def test_abandoned_analyses_hold_no_query_slot_and_those_waiting_never_start(
    words: list[str],
) -> None:
    """One analysis runs and two wait (analysis_queue), holding three of the four slots of
    max_in_flight, while the rest are refused at once with 429 before they take one; their
    clients leave, and the two waiting are dropped unstarted. (Evaluations once took every
    slot, and neighbour queries got 429.)"""
    env = {"EMBEDDING_SERVICE_MAX_IN_FLIGHT": "4", "EMBEDDING_SERVICE_ANALYSIS_QUEUE": "2"}
    with server_process(env) as (_, base), ExitStack() as stack:
        refused_before = overloaded(base)
        connections = [sent(base, EVALUATE, unrelated_analogies(words, seed)) for seed in range(8)]
        for connection in connections:
            stack.callback(connection.close)
        wait_until(lambda: overloaded(base) - refused_before >= 5, "5 evaluations refused")
        status, answer = call(f"{base}/v1/tables/minilm/neighbors", {"token": "king", "k": 1})
        assert status == 200, answer
        refused = answered_now(connections, 5)
        assert overloaded(base) - refused_before == 5
        for response in refused:
            assert response.status == 429 and response.getheader("retry-after") == "1"
            error = json.loads(response.read())["error"]
            assert error["type"] == "Overloaded" and "the analysis queue" in error["message"]
        given_up = {name: outcome(base, name) for name in ("dropped", "abandoned", "answered")}
        stack.close()  # every client leaves
        wait_until(lambda: outcome(base, "dropped") - given_up["dropped"] >= 2, "2 dropped")
        wait_until(
            lambda: sum(outcome(base, name) - given_up[name] for name in given_up) >= 3,
            "the running one given up or answered",
        )
        assert outcome(base, "dropped") - given_up["dropped"] == 2
        status, answer = call(f"{base}{EVALUATE}", unrelated_analogies(words, 9, count=10))
        assert status == 200 and answer["questions"] == 10, answer


def answered_now(
    connections: list[http.client.HTTPConnection], count: int
) -> list[http.client.HTTPResponse]:
    """The answers of the `count` connections that have one (the others have none coming)."""
    ready: list[http.client.HTTPConnection] = []
    for _ in range(POLLS):
        sockets = [c.sock for c in connections]
        readable, _, _ = select.select(sockets, [], [], 0.05)
        ready = [c for c in connections if c.sock in readable]
        if len(ready) >= count:
            break
    assert len(ready) == count, f"{len(ready)} answered, not {count}"
    return [connection.getresponse() for connection in ready]


@pytest.mark.slow
def test_a_stopping_server_answers_the_analyses_it_holds_and_exits(words: list[str]) -> None:
    """SIGTERM with one analysis running and two waiting: when the drain ends each gets 503
    NotReady (the running one stopped at a safe point) and the process exits, though the
    shutdown timeout would let them all compute (as it once did)."""
    env = {
        "EMBEDDING_SERVICE_DRAIN_SECONDS": "0.5",
        "EMBEDDING_SERVICE_SHUTDOWN_TIMEOUT_SECONDS": "600",
    }
    with server_process(env) as (process, base), ExitStack() as stack:
        connections = [sent(base, EVALUATE, unrelated_analogies(words, seed)) for seed in range(3)]
        for connection in connections:
            stack.callback(connection.close)
        gauge = "embedding_service_http_requests_in_flight"
        wait_until(lambda: metric(base, gauge, {}) == 3, "3 evaluations in flight")
        process.send_signal(signal.SIGTERM)
        answers = []
        for connection in connections:
            response = connection.getresponse()
            answers.append((response.status, json.loads(response.read())))
        exit_code = process.wait(timeout=120)  # a hang guard
    for status, answer in answers:
        assert status == 503 and answer["error"]["type"] == "NotReady", answer
    assert exit_code == 0


def evaluations_computed() -> float:
    name = "embedding_service_search_duration_seconds_count"
    return REGISTRY.get_sample_value(name, {"operation": "evaluate"}) or 0.0


def test_a_builtin_evaluation_is_computed_once_per_table_load(make_client: AppFactory) -> None:
    """Asked again (listing its questions or not), it is answered from the first; other options
    are another evaluation; a reload computes it anew."""
    builtin = {"builtin": "questions-words"}
    with make_client(admin_key="admin-key") as client:

        def evaluate(**options: object) -> dict[str, Any]:
            answer = client.post("/v1/tables/small/evaluate", json={**builtin, **options})
            assert answer.status_code == 200, answer.text
            return dict(answer.json())

        start = evaluations_computed()
        first = evaluate()
        assert evaluate() == first
        listed = evaluate(questions=True)
        assert listed["total"] == first["total"] and "questions" in listed["sections"][0]
        assert evaluations_computed() - start == 1
        assert evaluate(dummy4unknown=True)["total"] != first["total"]
        assert evaluations_computed() - start == 2
        reloaded = client.post(
            "/v1/admin/tables/small/reload", headers={"authorization": "Bearer admin-key"}
        )
        assert reloaded.status_code == 200, reloaded.text
        assert evaluate() == first
        assert evaluations_computed() - start == 3

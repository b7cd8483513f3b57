"""Retries against real refusals: a real 429 from a server at its in-flight limit, a real 503
from one still loading its tables; Retry-After honoured, the total wait bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from embedding_service import Client, Overloaded, TableNotReady
from embedding_service.exchange import Outcome, Step, Wait
from harness.server import free_port, running_server
from tests.client.helpers import Recorder, minilm_table, status_of

pytestmark = pytest.mark.slow

# Rows x width of each slow table: a word2vec text file of about 17 MB, read three times over.
SLOW_ROWS, SLOW_WIDTH, SLOW_TABLES = 30_000, 100, 3


@pytest.fixture(scope="module")
def one_slot() -> Iterator[str]:
    """A server that serves one table request at a time (max_in_flight 1)."""
    env = {
        "EMBEDDING_SERVICE_TABLES": json.dumps([minilm_table()]),
        "EMBEDDING_SERVICE_MAX_IN_FLIGHT": "1",
        "EMBEDDING_SERVICE_CACHE_BYTES": "0",
    }
    with running_server(env) as base:
        yield base


# Restricts past the table's rows, a new one for each hold: the same evaluation, computed anew
# (the server keeps a built-in set's evaluation per option set and answers it again at once).
HOLDS = iter(range(300_000, 200_000, -1))


@contextmanager
def holding_the_only_slot(base: str) -> Iterator[threading.Thread]:
    """While a long evaluation holds the server's one in-flight slot."""
    restrict = next(HOLDS)
    holder = threading.Thread(
        target=lambda: Client(base).evaluate(
            "minilm", builtin="questions-words", restrict=restrict
        ),
        daemon=True,
    )
    holder.start()
    deadline = time.monotonic() + 20
    while in_flight(base) < 1:
        assert time.monotonic() < deadline, "the evaluation never started"
        time.sleep(0.01)
    yield holder
    holder.join(timeout=120)


def in_flight(base: str) -> float:
    with urllib.request.urlopen(f"{base}/metrics", timeout=5) as response:
        for line in response.read().decode().splitlines():
            if line.startswith("embedding_service_http_requests_in_flight "):
                return float(line.split()[-1])
    return 0.0


def test_a_429_is_retried_after_its_retry_after_until_answered(one_slot: str) -> None:
    recorder = Recorder()
    client = Client(one_slot, retries=100, retry_timeout=120, http_options=recorder.hooks())
    with holding_the_only_slot(one_slot):
        started = time.monotonic()
        answer = client.neighbors("minilm", "king", 2)
        waited = time.monotonic() - started
    assert answer.tokens == ["kings", "queen"]
    assert recorder.statuses[0] == 429 and recorder.statuses[-1] == 200
    assert set(recorder.statuses[:-1]) == {429}
    # The server said "Retry-After: 1"; each resend came no sooner.
    assert waited >= len(recorder.statuses) - 1 - 0.05


class Sleepless(Client):
    """A client that notes each wait it would sleep through instead of sleeping."""

    slept: list[float]

    def _perform(self, step: Step) -> Outcome:
        if isinstance(step, Wait):
            self.slept.append(step.seconds)
            return None
        return super()._perform(step)


def test_retries_stop_at_the_retry_timeout_and_the_count(one_slot: str) -> None:
    recorder = Recorder()
    hurried = Sleepless(one_slot, retry_timeout=0.5, http_options=recorder.hooks())
    hurried.slept = []
    never = Client(one_slot, retries=0)
    with holding_the_only_slot(one_slot):
        with pytest.raises(Overloaded) as shed:
            hurried.neighbors("minilm", "queen", 2)  # Retry-After 1 s is beyond 0.5 s
        assert hurried.slept == []  # gave up at once instead of waiting
        with pytest.raises(Overloaded):
            never.neighbors("minilm", "queen", 2)
    assert recorder.statuses == [429]
    assert shed.value.status == 429 and shed.value.retry_after == 1.0


def test_other_errors_are_never_retried(one_slot: str) -> None:
    recorder = Recorder()
    client = Client(one_slot, http_options=recorder.hooks())
    with pytest.raises(Exception) as refused:
        client.neighbors("minilm", "no-such-token-anywhere")
    assert type(refused.value).__name__ == "UnknownToken"
    assert recorder.statuses == [404]


@pytest.fixture(scope="module")
def slow_table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A word2vec text file that takes the server a while to read."""
    rows = np.random.default_rng(0).normal(size=(SLOW_ROWS, SLOW_WIDTH))
    path = tmp_path_factory.mktemp("slow") / "slow.txt"
    lines = (f"w{i} " + " ".join(f"{x:.4f}" for x in row) for i, row in enumerate(rows))
    path.write_text(f"{SLOW_ROWS} {SLOW_WIDTH}\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return path


@contextmanager
def loading_server(path: Path) -> Iterator[str]:
    """A server that has bound its port and is still loading its tables (503 meanwhile)."""
    tables = [{"name": f"slow{i}", "path": str(path)} for i in range(SLOW_TABLES)]
    port = free_port()
    env = {**os.environ, "EMBEDDING_SERVICE_TABLES": json.dumps(tables)}
    command = [sys.executable, "-m", "service", "serve", "--port", str(port)]
    process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while status_or_refused(base, "/healthz") != 200:
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.02)
        assert status_of(base, "/readyz") == 503, "loaded before the test could ask"
        yield base
    finally:
        process.kill()  # nothing to drain: it may still be loading
        process.wait(timeout=30)


def status_or_refused(base: str, path: str) -> int:
    try:
        return status_of(base, path)
    except OSError:
        return 0


def test_a_503_while_tables_load_is_retried_until_they_are_served(slow_table: Path) -> None:
    recorder = Recorder()
    with loading_server(slow_table) as base:
        client = Client(base, retries=100, retry_timeout=60, http_options=recorder.hooks())
        info = client.table(f"slow{SLOW_TABLES - 1}")
    assert (info.rows, info.width) == (SLOW_ROWS, SLOW_WIDTH)
    assert recorder.statuses[0] == 503 and recorder.statuses[-1] == 200
    assert set(recorder.statuses[:-1]) == {503}


def test_a_table_still_loading_past_the_retry_timeout_is_table_not_ready(
    slow_table: Path,
) -> None:
    with loading_server(slow_table) as base, pytest.raises(TableNotReady) as loading:
        Client(base, retry_timeout=0.2).neighbors("slow0", "w1")
    assert loading.value.status == 503 and loading.value.retry_after == 1.0

"""scripts/replicas: two replicas of one prepared table behind HAProxy, under wrk load.

A replica killed with SIGKILL under load costs no failed request and is back; a flood of
pipelined requests leaves every replica alive; a table updated across the replicas under load
costs no failed request, and every answer is the one its Table-Version header names.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from deploy import failover_check
from deploy.failover_check import UNLIMITED_CLIENT
from harness.wrk import WrkResult, run_wrk
from tests.deploy.conftest import tool
from tests.deploy.replica_set import (
    WIDTH,
    ReplicaSet,
    prepare,
    rows_as_read,
    running_replicas,
    table_version,
    write_text_table,
)

pytestmark = pytest.mark.slow

ROWS = 20_000
K = 10
NEIGHBORS = "/v1/tables/t/neighbors"
# How long a killed replica may take to be back behind the proxy (a hang guard).
BACK_SECONDS = 30
FLOOD_CONNECTIONS, FLOOD_REQUESTS = 48, 20_000
FLOOD_SOURCE = "127.0.0.2"


@dataclass(frozen=True)
class Tables:
    """A prepared folder served as `t`, and the text files of its two versions."""

    folder: Path
    first: Path
    second: Path


@pytest.fixture
def tables(tmp_path: Path) -> Tables:
    rng = np.random.default_rng(7)
    first = write_text_table(tmp_path / "first.txt", rng.standard_normal((ROWS, WIDTH)))
    second = write_text_table(tmp_path / "second.txt", rng.standard_normal((ROWS, WIDTH)))
    prepare(first, tmp_path / "t")
    return Tables(tmp_path / "t", first, second)


@pytest.fixture
def replica_set(tables: Tables) -> Iterator[ReplicaSet]:
    """Two replicas of `t`; the load's one address is not held to the per-client limit, which
    a machine fast enough would reach (the flood's test keeps it)."""
    tool("haproxy")
    serve = ("--table", f"t={tables.folder}")
    with running_replicas(tables.folder.parent, *serve, proxy_env=UNLIMITED_CLIENT) as running:
        yield running


@pytest.fixture
def limited_replica_set(tables: Tables) -> Iterator[ReplicaSet]:
    """Two replicas of `t` behind the proxy with its default bounds."""
    tool("haproxy")
    with running_replicas(tables.folder.parent, "--table", f"t={tables.folder}") as running:
        yield running


def vector_bodies(count: int, seed: int) -> list[str]:
    """`count` distinct neighbour queries by vector."""
    vectors = np.random.default_rng(seed).standard_normal((count, WIDTH))
    return [json.dumps({"vector": [round(x, 5) for x in v], "k": K}) for v in vectors.tolist()]


def loaded(replica_set: ReplicaSet, seconds: int) -> WrkResult:
    """wrk's figures for `seconds` of distinct vector queries through the proxy."""
    tool("wrk")
    bodies = vector_bodies(2000, seed=1)
    return run_wrk(replica_set.base + NEIGHBORS, 16, seconds, bodies)


def in_background(work: object) -> tuple[ThreadPoolExecutor, object]:
    """Run `work` (a no-argument callable) on a thread: (the pool, its future)."""
    pool = ThreadPoolExecutor(1)
    return pool, pool.submit(work)  # type: ignore[arg-type]


def test_a_replica_killed_under_load_costs_no_request_and_comes_back(
    replica_set: ReplicaSet,
) -> None:
    port = replica_set.replica_ports()[0]
    victim = replica_set.replica_pid(port)
    assert victim is not None
    pool, load = in_background(lambda: loaded(replica_set, 15))
    with pool:
        time.sleep(7)
        os.kill(victim, signal.SIGKILL)
        seconds = replica_set.wait_until_back(1, victim, BACK_SECONDS)
        result = load.result()  # type: ignore[attr-defined]
    print(f"killed at 7 s: {result}; replica 1 back behind the proxy {seconds:.1f} s later")
    assert result.failures == 0, result
    assert result.requests > 100, result
    assert replica_set.replica_pid(port) not in (None, victim)
    assert "replica 1 (port" in replica_set.said()  # the supervisor saw it exit
    # The restarted replica serves the same table: every answer names one version.
    assert versions_answered(replica_set, 20) == {table_version(replica_set.base, "t")}


def versions_answered(replica_set: ReplicaSet, count: int) -> set[str]:
    """The Table-Version headers of `count` queries through the proxy (each on its own
    connection, so both replicas answer some)."""
    versions = set()
    for body in vector_bodies(count, seed=2):
        connection = http.client.HTTPConnection("127.0.0.1", replica_set.port, timeout=30)
        try:
            connection.request("POST", NEIGHBORS, body, {"content-type": "application/json"})
            response = connection.getresponse()
            response.read()
            assert response.status == 200
            versions.add(response.getheader("table-version", ""))
        finally:
            connection.close()
    return versions


def test_the_failover_check_kills_a_replica_and_prints_its_figures(
    tables: Tables, capsys: pytest.CaptureFixture[str]
) -> None:
    """deploy/failover_check.py local: its own replica set, one kill -9, the figures."""
    tool("haproxy")
    tool("wrk")
    serve = ["--", "--table", f"t={tables.folder}"]
    code = failover_check.main(["--seconds", "10", "--at", "4", "local", *serve])
    said = capsys.readouterr().out
    print(said)
    assert code == 0, said
    figures = dict(re.findall(r"^(\w+): +(.*)$", said, re.M))
    assert figures["command"].startswith("python -m deploy.failover_check")
    assert "cores" in figures["machine"]
    assert re.search(r"failed 0$", figures["requests"]), said
    assert re.search(r"back behind the proxy after [\d.]+ s$", figures["killed"]), said
    assert "PSS summed" in figures["memory"]


def flood(port: int, requests: int) -> int:
    """Write `requests` pipelined GET /healthz on one connection at once; the answers read."""
    one = b"GET /healthz HTTP/1.1\r\nHost: flood\r\n\r\n"
    answers, tail = 0, b""
    # From another address than the load's: the proxy limits each client on its own.
    with socket.create_connection(("127.0.0.1", port), 120, (FLOOD_SOURCE, 0)) as sock:
        writer = threading.Thread(target=_send_all, args=(sock, one * requests), daemon=True)
        writer.start()
        while answers < requests:
            try:
                chunk = sock.recv(1 << 16)
            except OSError:
                break
            if not chunk:
                break
            data = tail + chunk
            answers += data.count(b"HTTP/1.1 200")
            tail = data[-16:]  # a status line split between two reads is counted once
            answers -= tail.count(b"HTTP/1.1 200")
        answers += tail.count(b"HTTP/1.1 200")
    return answers


def _send_all(sock: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the proxy closed the connection (its per-client limits)
        sock.sendall(data)


def test_a_flood_of_pipelined_requests_leaves_every_replica_alive(
    limited_replica_set: ReplicaSet,
) -> None:
    replica_set = limited_replica_set
    pids = [replica_set.replica_pid(port) for port in replica_set.replica_ports()]
    with ThreadPoolExecutor(FLOOD_CONNECTIONS) as pool:
        answered = list(
            pool.map(lambda _: flood(replica_set.port, FLOOD_REQUESTS), range(FLOOD_CONNECTIONS))
        )
    print(f"{sum(answered):,} of {FLOOD_CONNECTIONS * FLOOD_REQUESTS:,} /healthz answered 200")
    # The flooder's requests in any 10 s, past which the proxy refuses it, were answered.
    assert sum(answered) >= 50_000
    assert [replica_set.replica_pid(port) for port in replica_set.replica_ports()] == pids
    assert "exited with" not in replica_set.said()
    for number in (1, 2):
        assert replica_set.server_up(number)
    assert loaded(replica_set, 2).failures == 0  # another client is served all the while


def test_a_client_reconnecting_past_its_rate_is_refused_at_the_proxy(tables: Tables) -> None:
    """Past PROXY_CLIENT_CONNECTIONS_PER_10S new connections (50 here), the proxy refuses a
    client address at accept, no replica reached, while another address is served: what holds
    a reconnect storm that one process cannot (docs/operations.md, "Connections")."""
    tool("haproxy")
    serve = ("--table", f"t={tables.folder}")
    limit = {"PROXY_CLIENT_CONNECTIONS_PER_10S": "50"}
    with running_replicas(tables.folder.parent, *serve, proxy_env=limit) as replica_set:
        statuses = [healthz(replica_set.port, FLOOD_SOURCE) for _ in range(80)]
        other = healthz(replica_set.port, "127.0.0.3")
    assert statuses[:50] == [200] * 50, statuses
    assert statuses[60:] == [0] * 20, statuses  # closed at once, unanswered
    assert other == 200


def healthz(port: int, source: str) -> int:
    """GET /healthz through the proxy on a new connection from `source`; 0 if refused."""
    connection = http.client.HTTPConnection("127.0.0.1", port, 10, (source, 0))
    try:
        connection.request("GET", "/healthz")
        return connection.getresponse().status
    except (OSError, http.client.HTTPException):
        return 0
    finally:
        connection.close()


@dataclass
class VersionCheck:
    """Queries with known answers in both versions, sent until stopped, each answer checked
    against the version its Table-Version header names."""

    port: int
    expected: dict[str, list[list[int]]]  # version -> each query's neighbour ids
    bodies: list[bytes]
    seen: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            while not self.stop.is_set():
                self.check(connection, len(self.seen) % len(self.bodies))
        finally:
            connection.close()

    def check(self, connection: http.client.HTTPConnection, query: int) -> None:
        """Send query number `query`; note its version, and it if it is not that version's."""
        headers = {"content-type": "application/json"}
        connection.request("POST", NEIGHBORS, self.bodies[query], headers)
        response = connection.getresponse()
        answer = json.loads(response.read())
        version = response.getheader("table-version", "")
        ids = [n["id"] for n in answer.get("neighbors", [])]
        if response.status != 200 or self.expected.get(version, [])[query : query + 1] != [ids]:
            self.wrong.append(f"{response.status} {version}: {answer}")
        self.seen.append(version)


def nearest_ids(rows: np.ndarray, queries: np.ndarray) -> list[list[int]]:
    """The K nearest rows of each query by cosine (the oracle: numpy in float64)."""
    unit = rows.astype(np.float64) / np.linalg.norm(rows.astype(np.float64), axis=1)[:, None]
    scores = queries.astype(np.float64) @ unit.T
    return [list(map(int, np.argsort(-row, kind="stable")[:K])) for row in scores]


def test_a_table_updated_across_replicas_under_load_loses_nothing_and_never_mixes(
    replica_set: ReplicaSet, tables: Tables
) -> None:
    queries = np.random.default_rng(3).standard_normal((50, WIDTH)).round(5)
    bodies = [json.dumps({"vector": q, "k": K}).encode() for q in queries.tolist()]
    old_version = table_version(replica_set.base, "t")
    expected = {old_version: nearest_ids(rows_as_read(tables.first), queries)}
    new_rows = nearest_ids(rows_as_read(tables.second), queries)
    assert all(a != b for a, b in zip(expected[old_version], new_rows, strict=True))
    check = VersionCheck(replica_set.port, expected, bodies)
    pool, load = in_background(lambda: loaded(replica_set, 12))
    with pool, ThreadPoolExecutor(1) as checking:
        checked = checking.submit(check.run)
        time.sleep(3)
        prepare(tables.second, tables.folder)  # the new version, renamed in whole
        expected[table_version_of(tables)] = new_rows
        os.kill(replica_set.process.pid, signal.SIGHUP)
        replica_set.wait_for("rolling reload done", 120)
        result = load.result()  # type: ignore[attr-defined]
        check.stop.set()
        checked.result()
    new_version = table_version_of(tables)
    order = [v for i, v in enumerate(check.seen) if i == 0 or check.seen[i - 1] != v]
    print(f"{result}; {len(check.seen)} answers checked, versions in turn: {order}")
    assert result.failures == 0, result
    assert check.wrong == []
    assert check.seen[0] == old_version and check.seen[-1] == new_version != old_version
    for port in replica_set.replica_ports():
        assert table_version(f"http://127.0.0.1:{port}", "t") == new_version


def table_version_of(tables: Tables) -> str:
    """The version the prepared folder's rows have (its manifest's fingerprint)."""
    manifest = json.loads((tables.folder / "table.json").read_text(encoding="utf-8"))
    return str(manifest["fingerprint"])

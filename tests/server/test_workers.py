"""Workers restart forever once the server has started.

Before: with --workers 2, a worker killed with SIGKILL (what the OOM killer sends) and then its
replacement killed within 10 s read as a crash loop at start: every worker was stopped and the
port refused connections. Now only the first start has the crash-loop rule.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from harness.processes import child_pids
from harness.server import forget, start_server
from tests.conftest import small_vectors
from tests.robustness.conftest import write_table
from tests.robustness.servers import call

pytestmark = pytest.mark.slow


def wait_for(condition, seconds: float = 30.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise TimeoutError("condition not met")


def workers(pid: int, count: int) -> list[int] | None:
    """The supervisor's worker pids once there are `count` of them."""
    pids = child_pids(pid)
    return pids if len(pids) == count else None


def test_a_worker_and_then_its_replacement_killed_leave_the_port_served(tmp_path: Path) -> None:
    table = write_table(tmp_path / "tables", small_vectors())
    env = {"EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(table)}])}
    process, base = start_server(env, "--workers", "2")
    try:
        first = wait_for(lambda: workers(process.pid, 2))
        os.kill(first[0], signal.SIGKILL)
        replacement = wait_for(lambda: [p for p in child_pids(process.pid) if p not in first])
        os.kill(replacement[0], signal.SIGKILL)  # well within 10 s of its start
        assert call(f"{base}/healthz")[0] == 200  # the other worker serves meanwhile
        again = wait_for(
            lambda: replacement[0] not in (workers(process.pid, 2) or [replacement[0]])
        )
        assert again and process.poll() is None
        wait_for(lambda: call(f"{base}/v1/tables/small")[0] == 200)
        status, answer = call(f"{base}/v1/tables/small/neighbors", {"token": "king", "k": 2})
        assert status == 200 and len(answer["neighbors"]) == 2
    finally:
        process.terminate()
        code = process.wait(timeout=60)
        forget(process)
    assert code == 0


def test_the_start_up_log_says_where_the_server_is_and_what_it_serves(tmp_path: Path) -> None:
    """Start-up once logged no URL, no table, no explorer link."""
    from harness.server import server_log

    table = write_table(tmp_path / "tables", small_vectors())
    env = {
        "EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(table)}]),
        "EMBEDDING_SERVICE_LOG_LEVEL": "info",
    }
    for extra in ([], ["--workers", "2"]):
        process, base = start_server(env, *extra)
        try:
            wait_for(lambda: "ready on" in server_log(process, 100_000))  # noqa: B023
            log = server_log(process, 100_000)
        finally:
            process.terminate()
            process.wait(timeout=60)
            forget(process)
        assert f"listening on {base}; loading small (503 until ready)" in log
        assert "table 'small' ready: 9 x 4, npy, " in log and "exact search, from " in log
        assert f"ready on {base}: explorer {base}/explorer, API docs {base}/docs" in log


def test_workers_end_when_their_supervisor_is_killed(tmp_path: Path) -> None:
    table = write_table(tmp_path / "tables", small_vectors())
    env = {
        "EMBEDDING_SERVICE_TABLES": json.dumps([{"name": "small", "path": str(table)}]),
        "EMBEDDING_SERVICE_DRAIN_SECONDS": "0.5",
    }
    process, _ = start_server(env, "--workers", "2")
    try:
        pids = wait_for(lambda: workers(process.pid, 2))
        process.kill()  # SIGKILL: the supervisor cannot pass anything on
        process.wait(timeout=30)

        def gone(pid: int) -> bool:
            try:
                return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"
            except OSError:
                return True

        assert wait_for(lambda: all(gone(pid) for pid in pids), seconds=30)
    finally:
        forget(process)

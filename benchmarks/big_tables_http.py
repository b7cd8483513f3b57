"""HTTP phases of benchmarks/big_tables.py: start to ready, 1 against 2 workers, recall/req/s.

Servers are real `python -m service serve` processes on the prepared folder, the answer cache
off (EMBEDDING_SERVICE_CACHE_BYTES=0) so every neighbour request is searched; wrk (2 threads,
32 connections) shares the 2 cores with them. Memory per worker is read from
/proc/PID/smaps_rollup after the runs: RSS counts every page a worker maps, PSS divides each
shared page among the processes mapping it, so the memory-mapped table counts once in the sum.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from harness.processes import child_pids, memory_of
from harness.server import free_port
from harness.wrk import WrkResult, run_wrk

CONNECTIONS = 32
HTTP_EF = (32, 64, 128, 256)


def serve(
    prepared: Path,
    index: str | None,
    workers: int = 1,
    extra_env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> tuple[subprocess.Popen, str]:
    """Start a server on the prepared folder (index=None: the folder's saved index), with
    `extra_env` added to its environment, running the `service` package found in `cwd`
    (another checkout) when given."""
    port = free_port()
    spec = f"big={prepared}" + (f",index={index}" if index else "")
    env = {**os.environ, "EMBEDDING_SERVICE_LOG_LEVEL": "warning",
           "EMBEDDING_SERVICE_CACHE_BYTES": "0", "EMBEDDING_SERVICE_MAX_K": "1000",
           **(extra_env or {})}  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "service", "serve", "--port", str(port), "--table", spec,
         "--workers", str(workers)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd,
    )  # fmt: skip
    return process, f"http://127.0.0.1:{port}"


def status_of(url: str) -> int:
    """The status of GET url (0 when nothing answers)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)
    except OSError:
        return 0


def seconds_to_ready(prepared: Path, index: str | None) -> float:
    """From starting the process to its first /readyz 200."""
    started = time.perf_counter()
    process, base = serve(prepared, index)
    try:
        while status_of(f"{base}/readyz") != 200:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited with {process.returncode}")
            time.sleep(0.01)
        return time.perf_counter() - started
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """SIGTERM and wait."""
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=120)


def wait_for_index(base: str) -> dict[str, Any]:
    """The table's facts once its index is measured."""
    for _ in range(6000):
        with urllib.request.urlopen(f"{base}/v1/tables/big", timeout=10) as response:
            facts: dict[str, Any] = json.loads(response.read())
        if facts["index"]["state"] in ("ready", "failed", "exact"):
            return facts
        time.sleep(0.1)
    raise TimeoutError("the index never got ready")


def worker_pids(process: subprocess.Popen, workers: int) -> list[int]:
    """The serving processes: the server itself, or the supervisor's children."""
    return [process.pid] if workers == 1 else child_pids(process.pid)


def token_bodies(prepared: Path, count: int = 5000, **extra: Any) -> list[str]:
    """Neighbour requests for `count` random tokens (k=10)."""
    from service.engine.loaders import load_table

    table = load_table(prepared)
    rows = np.random.default_rng(11).choice(table.rows, size=count, replace=False)
    return [json.dumps({"token": token, "k": 10, **extra}) for token in table.vocabulary.take(rows)]


def _line(name: str, result: WrkResult) -> str:
    return (f"{name}: {result.requests_per_second:,.0f} req/s, p50 {result.p50_ms:.1f} ms, "
            f"p99 {result.p99_ms:.1f} ms, {result.failures} failed")  # fmt: skip


def http_phase(
    prepared: Path, seconds: float, results: dict, say: Callable[[str], None],
    phase: Callable[[str], None],
) -> None:  # fmt: skip
    """1 and 2 workers: throughput, memory per worker; with 1, recall against req/s."""
    phase(f"5. over HTTP, answer cache off, wrk {CONNECTIONS} connections on the same cores")
    duration = max(1, int(seconds))
    http: dict[str, Any] = {"workers": {}, "sweep": []}
    recall_by_ef = {p["ef_search"]: p["recall_at_10"] for p in results["sweeps"]["hnsw"]}
    for workers in (1, 2):
        process, base = serve(prepared, None, workers)
        try:
            while status_of(f"{base}/readyz") != 200:
                time.sleep(0.05)
            facts = wait_for_index(base)
            url = f"{base}/v1/tables/big/neighbors"
            run_wrk(url, CONNECTIONS, max(1, duration // 2), token_bodies(prepared))  # warm-up
            figures = {
                "healthz": run_wrk(f"{base}/healthz", CONNECTIONS, duration),
                "neighbors": run_wrk(url, CONNECTIONS, duration, token_bodies(prepared)),
                "neighbors_exact": run_wrk(
                    url, CONNECTIONS, duration, token_bodies(prepared, exact=True)
                ),
            }
            memory = {str(pid): memory_of(pid) for pid in worker_pids(process, workers)}
            if workers == 1:
                http["sweep"] = _sweep(url, prepared, duration, recall_by_ef, say)
        finally:
            stop(process)
        http["workers"][workers] = {
            "index": facts["index"],
            **{name: result.__dict__ for name, result in figures.items()},
            "memory": memory,
        }
        for name, result in figures.items():
            say(_line(f"{workers} worker(s), {name}", result))
        for pid, values in memory.items():
            say(f"{workers} worker(s), pid {pid}: RSS {values['rss_mib']:,.0f} MiB, "
                f"PSS {values['pss_mib']:,.0f} MiB")  # fmt: skip
        say(f"{workers} worker(s): PSS summed over workers "
            f"{sum(v['pss_mib'] for v in memory.values()):,.0f} MiB")  # fmt: skip
    results["http"] = http


def _sweep(
    url: str, prepared: Path, duration: int, recall_by_ef: dict[int, float],
    say: Callable[[str], None],
) -> list[dict[str, Any]]:  # fmt: skip
    points = []
    for ef in HTTP_EF:
        result = run_wrk(url, CONNECTIONS, duration, token_bodies(prepared, ef_search=ef))
        point = {"ef_search": ef, "recall_at_10": recall_by_ef.get(ef),
                 "requests_per_second": result.requests_per_second, "p99_ms": result.p99_ms,
                 "failures": result.failures}  # fmt: skip
        points.append(point)
        say(_line(f"1 worker, ef_search={ef} (recall@10 {recall_by_ef.get(ef)})", result))
    return points

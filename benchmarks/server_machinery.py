"""Our worker manager beside uvicorn's, and the app answering 503 while tables load beside the
raw-socket responder it replaced, side by side.

Run (wrk from Debian; the responder as of 2bfa7e5, exported beside the checkout):
    git archive 2bfa7e5 | (mkdir -p /tmp/responder && tar -x -C /tmp/responder)
    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.server_machinery \\
        [--rounds 3] [--seconds 6] [--responder /tmp/responder] [--only workers loading]

Workers (service/server/workers.py against `uvicorn.supervisors.Multiprocess`, both at 2
workers running the same `serve` in each worker: harness/uvicorn_serving.py): per round and
variant, the time from launch to the first 200 answer to a real query (neighbours of a token)
and to every worker having answered one (the worker that answered is found from the kernel's
socket tables), the peak RSS and PSS of all the server's processes meanwhile, and the CPU they
spent by then; wrk -t2 -c32 on distinct raw vectors (req/s, CPU a request of all processes,
the share of wrk's connections on the busiest worker halfway); then, once the server has lived
11 s, a worker SIGKILLed 2 s into a 16-second wrk run: the requests that failed, the time
until a new worker answered a query, and the queries on fresh connections meanwhile not
answered 200 (a replacement that answers 503 while it loads takes connections from the
worker that could answer them). Once per variant, a bad table at start (exit code, seconds,
error lines, worker errors), and the parent SIGKILLed (do its workers live on?).

Loading (with --responder: one worker of `serve` from that checkout, whose raw-socket responder
answered while the tables loaded, against `serve` here, where uvicorn serves at once and the
app answers 503 from the registry): the time to the first answer (a 503 while loading) and to
the first 200 query answer, connections refused after the first one accepted, peak RSS and the
CPU spent by then, and the bad table.

The variants alternate within each round, the order reversed every other round.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from harness import workloads
from harness.machine import machine
from harness.processes import (
    busiest_share,
    child_pids,
    running,
    socket_owner,
    tree,
    tree_cpu,
    tree_memory,
)
from harness.server import free_port
from harness.wrk import WrkResult, run_wrk

NEIGHBORS = "/v1/tables/minilm/neighbors"
QUERY = json.dumps({"token": "king", "k": 10})
START_TIMEOUT = 60.0
BAD_TABLE_SECONDS = 20.0
KILL_WRK_SECONDS = 16
ENV = {"EMBEDDING_SERVICE_LOG_LEVEL": "warning", "EMBEDDING_SERVICE_DRAIN_SECONDS": "0"}
SERVE = [sys.executable, "-m", "service", "serve"]
UVICORN = [sys.executable, "-m", "harness.uvicorn_serving"]
WORKERS = {"ours": [*SERVE, "--workers", "2"],
           "uvicorn": [*UVICORN, "serve", "--workers", "2"]}  # fmt: skip
# The loading comparison: `serve` now (the app answers 503) against a checkout with the responder.
LOADING = ("responder", "app-503")


@dataclass
class Start:
    """A server's start: seconds to the first 200 and to every worker answering, and more."""

    first_answer: float = 0.0
    first_200: float = 0.0
    all_workers: float = 0.0
    peak_rss_mib: float = 0.0
    peak_pss_mib: float = 0.0
    cpu_seconds: float = 0.0
    refused_after_accept: int = 0
    answered_by: set[int] = field(default_factory=set)


def ask(port: int, pid: int) -> tuple[int, int | None]:
    """One neighbours query on a fresh connection: (status, the process that answered)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("POST", NEIGHBORS, QUERY, {"content-type": "application/json"})
        response = connection.getresponse()
        response.read()
        owner = None
        if response.status == 200 and connection.sock is not None:
            owner = socket_owner(port, connection.sock.getsockname()[1], tree(pid))
        return response.status, owner
    finally:
        connection.close()


def launch(
    command: list[str], port: int, *extra: str, cwd: str | None = None
) -> subprocess.Popen[bytes]:
    """The server's command on `port` (the `service` package in `cwd`), its log in a file."""
    log = tempfile.TemporaryFile()  # noqa: SIM115 (read after the server ends)
    process = subprocess.Popen(
        [*command, "--port", str(port), *extra],
        env={**os.environ, **ENV},
        stdout=subprocess.DEVNULL,
        stderr=log,
        cwd=cwd,
    )
    process.log = log  # type: ignore[attr-defined]
    return process


def start(
    command: list[str], workers: int, cwd: str | None = None
) -> tuple[subprocess.Popen[bytes], int, Start]:
    """Launch and poll with real queries until `workers` processes have each answered one."""
    port = free_port()
    began = time.monotonic()
    process = launch(command, port, cwd=cwd)
    result = Start()
    accepted = False
    while len(result.answered_by) < workers:
        if time.monotonic() - began > START_TIMEOUT or process.poll() is not None:
            raise RuntimeError(f"{command} did not start: {stop(process)}")
        rss, pss = tree_memory(process.pid)
        result.peak_rss_mib = max(result.peak_rss_mib, rss)
        result.peak_pss_mib = max(result.peak_pss_mib, pss)
        try:
            status, owner = ask(port, process.pid)
            accepted = True
        except ConnectionRefusedError:
            result.refused_after_accept += accepted
            status, owner = 0, None
        except OSError:
            status, owner = 0, None
        if status and not result.first_answer:
            result.first_answer = time.monotonic() - began
        if status == 200 and not result.first_200:
            result.first_200 = time.monotonic() - began
        if owner is not None:
            result.answered_by.add(owner)
        time.sleep(0.02)
    result.all_workers = time.monotonic() - began
    result.cpu_seconds = tree_cpu(process.pid)
    return process, port, result


def stop(process: subprocess.Popen[bytes]) -> str:
    """Stop the server (SIGTERM, then SIGKILL); what it logged."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    log = process.log  # type: ignore[attr-defined]
    log.seek(0)
    return str(log.read().decode(errors="replace"))


@dataclass(frozen=True)
class Load:
    """wrk on distinct vectors: the result, the CPU a request of all the processes, and the
    share of wrk's connections the busiest worker held."""

    wrk: WrkResult
    cpu_us: float
    busiest: float


def under_wrk(pid: int, port: int, seconds: int, bodies: list[str]) -> Load:
    before = tree_cpu(pid)
    shares: list[float] = []
    look = threading.Timer(seconds / 2, lambda: shares.append(busiest_share(pid, port)))
    look.start()
    result = run_wrk(f"http://127.0.0.1:{port}{NEIGHBORS}", 32, seconds, bodies)
    look.join()
    return Load(result, (tree_cpu(pid) - before) / max(1, result.requests) * 1e6, shares[0])


def kill_one(pid: int, port: int, victim: int, bodies: list[str]) -> dict[str, float]:
    """SIGKILL `victim` 2 s into a wrk run of KILL_WRK_SECONDS (long enough to see the
    replacement load and serve): wrk's failures, the seconds until a new worker answered a
    query, and the queries on fresh connections meanwhile that were not answered 200."""
    outcome: list[WrkResult] = []
    url = f"http://127.0.0.1:{port}{NEIGHBORS}"
    load = threading.Thread(
        target=lambda: outcome.append(run_wrk(url, 32, KILL_WRK_SECONDS, bodies))
    )
    load.start()
    time.sleep(2)
    before = set(child_pids(pid))
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    replaced, probes, refused = float("nan"), 0, 0
    while time.monotonic() - killed < 30:
        probes += 1
        try:
            status, owner = ask(port, pid)
        except OSError:
            status, owner = 0, None
        if status == 200 and owner is not None and owner not in before:
            replaced = time.monotonic() - killed
            break
        refused += status != 200
        time.sleep(0.02)
    load.join()
    return {"kill_failed": outcome[0].failures, "kill_requests": outcome[0].requests,
            "replaced_s": replaced, "probes_not_200": refused, "probes": probes}  # fmt: skip


def bad_table(command: list[str], cwd: str | None = None) -> str:
    """What the server does with a table file that cannot be read: exit code, time, lines."""
    with tempfile.NamedTemporaryFile(suffix=".bin") as bad:
        bad.write(b"not a word2vec file\n" * 10)
        bad.flush()
        began = time.monotonic()
        process = launch(command, free_port(), "--table", f"bad={bad.name}", cwd=cwd)
        try:
            code: int | str = process.wait(timeout=BAD_TABLE_SECONDS)
        except subprocess.TimeoutExpired:
            code = f"still running after {BAD_TABLE_SECONDS:.0f} s"
        seconds = time.monotonic() - began
        log = stop(process).splitlines()
    errors = [line for line in log if "error" in line.lower()]
    starts = sum("embedding-service: error" in line for line in log)
    shown = errors[0][:90] if errors else ""
    return (f"exit {code} in {seconds:.1f} s, {len(errors)} error lines, {starts} worker "
            f"error(s); first: {shown!r}")  # fmt: skip


def parent_killed(command: list[str]) -> str:
    """SIGKILL the parent of a started server: how many workers live on 3 s later, and whether
    the port still answers."""
    process, port, began = start(command, 2)
    process.kill()
    process.wait()
    time.sleep(3)
    alive = [pid for pid in began.answered_by if running(pid)]
    try:
        answer = f"the port answers {ask(port, process.pid)[0]}" if alive else "the port is closed"
    finally:
        for pid in alive:  # orphans: nobody else will stop them
            os.kill(pid, signal.SIGTERM)
    return f"{len(alive)} of 2 workers alive 3 s later, {answer}"


def order(names: list[str], round_: int) -> list[str]:
    """The variants in this round's order: reversed every other round."""
    return names[::-1] if round_ % 2 else names


def workers_round(name: str, seconds: int, bodies: list[str]) -> dict[str, float]:
    """One variant at 2 workers: its start, wrk, and a worker killed under wrk."""
    process, port, began = start(WORKERS[name], 2)
    launched = time.monotonic() - began.all_workers
    try:
        load = under_wrk(process.pid, port, seconds, bodies)
        # A worker of ours that dies younger than 10 s at start stops the server: kill later.
        time.sleep(max(0.0, launched + 11 - time.monotonic()))
        victim = sorted(began.answered_by)[0]
        killed = kill_one(process.pid, port, victim, bodies)
    finally:
        stop(process)
    return killed | {"first_200_s": began.first_200, "all_workers_s": began.all_workers,
            "peak_rss_mib": began.peak_rss_mib, "peak_pss_mib": began.peak_pss_mib,
            "start_cpu_s": began.cpu_seconds, "req_s": load.wrk.requests_per_second,
            "cpu_us": load.cpu_us, "busiest": load.busiest,
            "wrk_failed": load.wrk.failures}  # fmt: skip


def loading_round(name: str, folder: str) -> dict[str, float]:
    """One variant at 1 worker (`serve` from `folder`): its start only."""
    process, _, began = start(SERVE, 1, cwd=folder)
    stop(process)
    return {"first_answer_s": began.first_answer, "first_200_s": began.first_200,
            "refused": began.refused_after_accept,
            "peak_rss_mib": began.peak_rss_mib, "start_cpu_s": began.cpu_seconds}  # fmt: skip


def report(title: str, results: dict[str, list[dict[str, float]]]) -> None:
    """Every figure per variant: the median over the rounds, then each round's value."""
    print(title)
    for name, rounds in results.items():
        cells = []
        for key in rounds[0]:
            values = [r[key] for r in rounds]
            each = "/".join(f"{v:,.2f}" if v < 100 else f"{v:,.0f}" for v in values)
            cells.append(f"{key} {statistics.median(values):,.2f} ({each})")
        print(f"  {name:>9}: " + "; ".join(cells))


def run_rounds(
    names: list[str], rounds: int, measure: Callable[[str], dict[str, float]]
) -> dict[str, list[dict[str, float]]]:
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for round_ in range(rounds):
        for name in order(names, round_):
            results[name].append(measure(name))
            print(f"round {round_ + 1} {name}: {results[name][-1]}", flush=True)
    return results


def main() -> None:
    """Both comparisons, rounds alternating, then the bad table for every variant."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=6)
    parser.add_argument("--only", nargs="+", choices=["workers", "loading"],
                        default=["workers", "loading"])  # fmt: skip
    parser.add_argument("--responder", help="a checkout whose serve has the loading responder")
    args = parser.parse_args()
    print(f"command: python -m benchmarks.server_machinery {' '.join(sys.argv[1:])}")
    print(f"machine: {machine()}; load {os.getloadavg()[0]:.1f}")
    vectors = workloads.random_vectors(workloads.default_vocabulary().width, 40_000)
    bodies = workloads.vector_bodies(vectors)
    if "workers" in args.only:
        measure = lambda name: workers_round(name, args.seconds, bodies)  # noqa: E731
        report("workers, median (each round):", run_rounds(list(WORKERS), args.rounds, measure))
        for name, command in WORKERS.items():
            print(f"  bad table, {name}: {bad_table(command)}")
            print(f"  parent SIGKILLed, {name}: {parent_killed(command)}")
    if "loading" in args.only and args.responder:
        folders = {"responder": os.path.abspath(args.responder), "app-503": os.getcwd()}
        results = run_rounds(
            list(LOADING), args.rounds, lambda name: loading_round(name, folders[name])
        )
        report("loading, median (each round):", results)
        for name, folder in folders.items():
            print(f"  bad table, {name}: {bad_table(SERVE, folder)}")


if __name__ == "__main__":
    main()

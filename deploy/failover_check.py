"""A replica killed under load through the proxy: no request may fail, and it must come back.

    python -m deploy.failover_check local --replicas 2 -- --table t=/data/t-prepared
    python -m deploy.failover_check proxy --service http://127.0.0.1:8000 \\
        --metrics http://127.0.0.1:8404/metrics -- kill -9 PID

`local` starts scripts/replicas itself (the options after `--` go to it and on to each
replica's serve) and kills replica 1's process with SIGKILL; `proxy` runs the command after
`--` against a proxy already running (scripts/compose-smoke). Either way wrk sends distinct
neighbour queries by vector to the first table through the proxy for --seconds, the kill
comes at --at seconds, and the replica is back when the proxy has as many replicas up as
before it. Prints the command, the machine and the figures; exits 1 if any request failed
or the replica was not back within --back-timeout seconds. Standard library and wrk only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.machine import machine
from harness.processes import child_pids, memory_of
from harness.server import free_port, poll_ready
from harness.wrk import WrkResult, run_wrk

REPOSITORY = Path(__file__).resolve().parents[1]
BODIES = 2000
CONNECTIONS = 16
K = 10
# The load comes from one address, which the proxy's per-client limits (50,000 requests and
# 5,000 new connections in 10 s) would refuse on a machine fast enough; they are not what is
# measured here.
UNLIMITED_CLIENT = {
    "PROXY_CLIENT_REQUESTS_PER_10S": "1000000000",
    "PROXY_CLIENT_CONNECTIONS_PER_10S": "1000000000",
}
ACTIVE = re.compile(r'^haproxy_backend_active_servers\{proxy="replicas"\} (\d+)', re.M)


def get_json(url: str) -> dict[str, object]:
    """GET `url`'s JSON object."""
    with urllib.request.urlopen(url, timeout=10) as response:
        answer = json.loads(response.read())
    assert isinstance(answer, dict)
    return answer


def first_table(service: str) -> tuple[str, int]:
    """The name and width of the first table the service lists."""
    tables = get_json(f"{service}/v1/tables")["tables"]
    assert isinstance(tables, list) and tables, f"{service} serves no table"
    return str(tables[0]["name"]), int(tables[0]["width"])


def vector_bodies(width: int) -> list[str]:
    """BODIES distinct neighbour queries by vector."""
    rng = random.Random(1)
    vectors = ([round(rng.gauss(0, 1), 5) for _ in range(width)] for _ in range(BODIES))
    return [json.dumps({"vector": vector, "k": K}) for vector in vectors]


def active_replicas(metrics: str) -> int:
    """How many replicas the proxy has up (its own Prometheus metrics)."""
    with urllib.request.urlopen(metrics, timeout=5) as response:
        found = ACTIVE.search(response.read().decode())
    assert found, f"no haproxy_backend_active_servers of backend replicas at {metrics}"
    return int(found.group(1))


def seconds_until_back(metrics: str, replicas: int, killed_at: float, timeout: float) -> float:
    """Seconds from the kill until the proxy, having seen a replica down, has `replicas` up."""
    seen_down = False
    while time.monotonic() - killed_at < timeout:
        active = active_replicas(metrics)
        seen_down = seen_down or active < replicas
        if seen_down and active >= replicas:
            return time.monotonic() - killed_at
        time.sleep(0.1)
    state = "back" if seen_down else "down"
    raise TimeoutError(f"the proxy never saw the replica {state} within {timeout:g} s")


def measure(
    args: argparse.Namespace,
    service: str,
    metrics: str,
    kill: Callable[[], None],
    memory: Callable[[], str] = lambda: "not measured (the replicas are not children here)",
) -> int:
    """The load, the kill at --at s, the wait for the replica; prints the figures."""
    table, width = first_table(service)
    replicas = active_replicas(metrics)
    url = f"{service}/v1/tables/{table}/neighbors"
    outcome: dict[str, WrkResult] = {}
    load = threading.Thread(
        target=lambda: outcome.update(
            load=run_wrk(url, CONNECTIONS, args.seconds, vector_bodies(width))
        )
    )
    load.start()
    time.sleep(args.at)
    held = memory()
    killed_at = time.monotonic()
    kill()
    try:
        back = f"{seconds_until_back(metrics, replicas, killed_at, args.back_timeout):.1f} s"
    except TimeoutError as error:
        back = f"not back: {error}"
    load.join()
    result = outcome["load"]
    print(f"command:  {shlex.join(['python', '-m', 'deploy.failover_check', *args.argv])}")
    print(f"machine:  {machine()}")
    print(f"load:     wrk, {CONNECTIONS} connections, {args.seconds} s of {BODIES:,} distinct "
          f"vector queries (k={K}) to {table} ({width} wide), {replicas} replicas")  # fmt: skip
    print(f"requests: {result.requests:,} ({result.requests_per_second:,.0f}/s, "
          f"p99 {result.p99_ms:.1f} ms), failed {result.failures}")  # fmt: skip
    print(f"memory:   {held}")
    print(f"killed:   one replica at {args.at:g} s; back behind the proxy after {back}")
    ok = result.failures == 0 and result.requests > 0 and not back.startswith("not")
    print("ok    failover" if ok else "FAIL  failover", flush=True)
    return 0 if ok else 1


@contextmanager
def local_replicas(replicas: int, options: list[str], log: Path) -> Iterator[tuple[str, str, int]]:
    """scripts/replicas on free ports until every replica is ready: (service, metrics, the
    supervisor's pid); SIGTERM after."""
    port, metrics_port = free_port(), free_port()
    command = [str(REPOSITORY / "scripts" / "replicas"), "--replicas", str(replicas)]
    command += ["--port", str(port), "--metrics-port", str(metrics_port), *options]
    env = {**UNLIMITED_CLIENT, **os.environ, "EMBEDDING_SERVICE_LOG_LEVEL": "warning"}
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=out, env=env)
    service = f"http://127.0.0.1:{port}"
    said = lambda: log.read_text(errors="replace")  # noqa: E731
    try:
        poll_ready(service, lambda: None if process.poll() is None else said(), 300)
        metrics = f"http://127.0.0.1:{metrics_port}/metrics"
        # The replicas say ready before the proxy's checks (two passed) have them all up.
        while "replicas: ready" not in said() or active_replicas(metrics) < replicas:
            time.sleep(0.2)
        yield service, metrics, process.pid
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def replica_pids(supervisor: int) -> list[int]:
    """The process ids of the supervisor's replicas (its `serve` children), oldest first."""
    serving = [pid for pid in child_pids(supervisor) if b"serve" in command_of(pid)]
    return sorted(serving, key=lambda pid: int(Path(f"/proc/{pid}/stat").read_text().split()[21]))


def command_of(pid: int) -> list[bytes]:
    """A process's arguments ([] once it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def memory_line(pids: list[int]) -> str:
    """The replicas' summed PSS beside one replica's RSS: what sharing one mapped table saves."""
    held = [memory_of(pid) for pid in pids]
    pss = sum(m["pss_mib"] for m in held)
    each = ", ".join(f"{m['rss_mib']:,.0f}" for m in held)
    return f"{len(pids)} replicas' PSS summed {pss:,.0f} MiB; RSS of each {each} MiB"


def run_local(args: argparse.Namespace) -> int:
    """`local`: start scripts/replicas, kill replica 1 under load."""
    with tempfile.TemporaryDirectory(prefix="failover-") as folder:
        log = Path(folder) / "replicas.log"
        with local_replicas(args.replicas, args.rest, log) as (service, metrics, supervisor):
            pids = replica_pids(supervisor)
            kill = lambda: os.kill(pids[0], signal.SIGKILL)  # noqa: E731
            return measure(args, service, metrics, kill, lambda: memory_line(pids))


def run_proxy(args: argparse.Namespace) -> int:
    """`proxy`: a proxy already running; the command after `--` kills a replica."""
    if not args.rest:
        raise SystemExit("failover_check proxy: give the command that kills a replica after --")

    def kill() -> None:
        subprocess.run(args.rest, check=True, capture_output=True)

    return measure(args, args.service.rstrip("/"), args.metrics, kill)


def parser() -> argparse.ArgumentParser:
    """The command line: `local` or `proxy`, the load's length and the kill's time."""
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--seconds", type=int, default=15, help="load duration (15)")
    options.add_argument("--at", type=float, default=7.0, help="when the kill comes (7)")
    options.add_argument("--back-timeout", type=float, default=30.0, help="seconds (30)")
    modes = options.add_subparsers(dest="mode", required=True)
    local = modes.add_parser("local", help="start scripts/replicas and kill replica 1")
    local.add_argument("--replicas", type=int, default=2, help="replicas (2)")
    proxy = modes.add_parser("proxy", help="a running proxy; the command after -- kills")
    proxy.add_argument("--service", required=True, help="the proxy's base URL")
    proxy.add_argument("--metrics", required=True, help="the proxy's own /metrics URL")
    for mode in (local, proxy):
        mode.add_argument("rest", nargs=argparse.REMAINDER, help="-- then the rest")
    return options


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser().parse_args(argv)
    args.argv = argv
    args.rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    return run_local(args) if args.mode == "local" else run_proxy(args)


if __name__ == "__main__":
    sys.exit(main())

"""The catalogue of attacks against a real server that is memory-limited like its pod.

    sudo .venv/bin/python -m loadtests.attack [--memory-mib 1024] [--seconds 12] \
        [--variant ours|granian|haproxy|deployed]

The server (`--variant`, harness/edges.py: our own `serve`, Granian, HAProxy in front of
uvicorn, or `serve` behind the deployed HAProxy configuration) runs with the Kubernetes
manifest's 1 GiB memory limit for all its processes (a cgroup, v1 or v2, when this process may
create one; else RLIMIT_AS, which also counts reserved address space, so it is set higher and
the report says so), the container's 1,024 file descriptors in each process, API keys and an
admin key. Each attack (loadtests/attacks.py) runs for a bounded time against 127.0.0.1 only,
while a probe client opens a new connection every 50 ms for /healthz and a neighbours query,
with an API key of its own: it stands for the other callers, so a keyed attack (the flood) is
the attacker's key against the probe's, and from an address of its own (127.0.0.2). Per attack
it prints: whether the server is alive afterwards, its peak resident memory during the attack
(VmHWM, reset before each, summed over its processes), the cgroup's peak when there is one
(page cache included), the probe's p99, its queries shed with 429 (the designed answer at the
in-flight limit) and its failures (no answer, a 5xx, or /healthz not 200). Exit 1 if the server
died, the probe failed, fewer than 95% of its requests were answered 2xx (429s count against
it) or its p99 reached 1 s.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from harness.edges import EDGES, EdgeServer, running_edge
from harness.machine import machine
from loadtests import attacks, keyless

API_KEY = "attack-api-key"
PROBE_KEY = "probe-api-key"
# The probe's source address: another client than the attacker (127.0.0.1), as a proxy's
# per-client limits (the `deployed` variant) tell them apart.
PROBE_ADDRESS = "127.0.0.2"
# Behind the deployed proxy, the pause before each attack: deploy/haproxy/haproxy.cfg counts a
# client's connections and requests over 10 s, estimated from the current and the previous
# period, so a flood's count is gone two periods later (11 s after one, its address was still
# refused).
PROXY_WINDOW_SECONDS = 21.0
ADMIN_KEY = "attack-admin-key"
PROBE_INTERVAL = 0.05
PROBE_P99_LIMIT_MS = 1000.0
PROBE_2XX_AT_LEAST = 0.95  # of the probe's requests, 429s included in the count


@dataclass
class Probe:
    """A client that opens a new connection for each request, alongside the attack."""

    port: int
    latencies: list[float] = field(default_factory=list)
    failures: int = 0
    shed: int = 0  # queries answered 429 at the in-flight limit: an answer, not a failure
    running: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        """Alternate /healthz and a neighbours query until stopped."""
        body = json.dumps({"token": "king", "k": 5})
        turn = 0
        while self.running.is_set():
            started = time.perf_counter()
            path = "/healthz" if turn % 2 == 0 else "/v1/tables/minilm/neighbors"
            turn += 1
            try:
                status = self._request(path, body if turn % 2 == 0 else None)
            except OSError:
                status = 0
            if status == 200:
                self.latencies.append(time.perf_counter() - started)
            elif status == 429 and path != "/healthz":
                self.shed += 1
            else:
                self.failures += 1
            time.sleep(max(0.0, PROBE_INTERVAL - (time.perf_counter() - started)))

    def _request(self, path: str, body: str | None) -> int:
        address = (PROBE_ADDRESS, 0)
        connection = http.client.HTTPConnection(
            "127.0.0.1", self.port, timeout=10, source_address=address
        )
        try:
            headers = {"authorization": f"Bearer {PROBE_KEY}", "content-type": "application/json"}
            connection.request("POST" if body else "GET", path, body, headers)
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    def answered(self) -> float:
        """The share of the probe's requests answered 2xx."""
        total = len(self.latencies) + self.shed + self.failures
        return len(self.latencies) / total if total else 0.0

    def p99_ms(self) -> float:
        """The p99 of the probe's successful requests."""
        return float(np.percentile(self.latencies, 99)) * 1000 if self.latencies else float("inf")


class MemoryLimit:
    """A memory cgroup (v1 or v2) for the server, or RLIMIT_AS when none can be made."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.path, self.version = _make_cgroup(limit)

    @property
    def kind(self) -> str:
        """How the limit is enforced, for the report."""
        if self.path is None:
            return f"RLIMIT_AS {self.limit // 2**20} MiB (no cgroup could be made)"
        return f"cgroup v{self.version} memory limit {self.limit // 2**20} MiB"

    def enter(self) -> None:
        """In the child before exec: join the cgroup (or limit the address space)."""
        if self.path is None:
            resource.setrlimit(resource.RLIMIT_AS, (self.limit, self.limit))
            return
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def peak_and_reset(self) -> int | None:
        """The cgroup's peak usage since the last call (None without a cgroup)."""
        if self.path is None:
            return None
        name = "memory.max_usage_in_bytes" if self.version == 1 else "memory.peak"
        try:
            peak = int((self.path / name).read_text())
            if self.version == 1:
                (self.path / name).write_text("0")
            return peak
        except OSError:
            return None

    def remove(self) -> None:
        """Delete the cgroup (once the server has exited)."""
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.rmdir()


def _make_cgroup(limit: int) -> tuple[Path | None, int]:
    name = f"embedding-attack-{os.getpid()}"
    for root, version, setting in (
        (Path("/sys/fs/cgroup/memory"), 1, "memory.limit_in_bytes"),
        (Path("/sys/fs/cgroup/unified"), 2, "memory.max"),
        (Path("/sys/fs/cgroup"), 2, "memory.max"),
    ):
        try:
            path = root / name
            path.mkdir()
            (path / setting).write_text(str(limit))
            if version == 1:
                with contextlib.suppress(OSError):  # no swap to escape into, where supported
                    (path / "memory.memsw.limit_in_bytes").write_text(str(limit))
            return path, version
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                path.rmdir()
    return None, 0


def rss(pid: int) -> int | None:
    """VmRSS of `pid` in bytes (resident now), or None if it is gone."""
    return _status_bytes(pid, "VmRSS:")


def reset_peak_rss(pid: int) -> None:
    """Start VmHWM (peak resident memory) over from the current RSS."""
    with contextlib.suppress(OSError):
        Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_rss(pid: int) -> int | None:
    """VmHWM of `pid` in bytes, or None if it is gone."""
    return _status_bytes(pid, "VmHWM:")


def _status_bytes(pid: int, field: str) -> int | None:
    """A size from /proc/<pid>/status (given there in kB), in bytes; None if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def server_env(tables_dir: Path) -> dict[str, str]:
    """The attacked server's settings: API keys, an admin key and its tables folder."""
    return {
        "EMBEDDING_SERVICE_API_KEYS": json.dumps([API_KEY, PROBE_KEY]),
        "EMBEDDING_SERVICE_ADMIN_KEY": ADMIN_KEY,
        "EMBEDDING_SERVICE_ADMIN_TABLES_DIR": str(tables_dir),
    }


@contextlib.contextmanager
def attacked_server(memory: MemoryLimit, tables_dir: Path, variant: str) -> Iterator[EdgeServer]:
    """The service behind edge `variant`, memory-limited, 1,024 descriptors a process."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
        memory.enter()

    with running_edge(variant, server_env(tables_dir), limits) as edge:
        yield edge


def alive(edge: EdgeServer) -> bool:
    """Every process runs and /healthz is answered 200 to another client than the attacker
    (the probe's address: a proxy may still be refusing the attacker's)."""
    if not edge.running():
        return False
    try:
        connection = http.client.HTTPConnection(
            "127.0.0.1", edge.port, timeout=10, source_address=(PROBE_ADDRESS, 0)
        )
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False


def run_attack(
    attack: attacks.Attack,
    edge: EdgeServer,
    memory: MemoryLimit,
    tables: Path,
    p99_bound_ms: float = PROBE_P99_LIMIT_MS,
) -> tuple[bool, str]:
    """One attack with the probe alongside; (passed, report line)."""
    for pid in edge.pids():
        reset_peak_rss(pid)
    memory.peak_and_reset()
    probe = Probe(edge.port)
    probe.running.set()
    thread = threading.Thread(target=probe.run, daemon=True)
    thread.start()
    started = time.monotonic()
    refuted = False
    try:
        detail = attack.run(target_of(edge, tables))
    except attacks.Refuted as error:
        detail, refuted = f"REFUTED: {error}", True
    except Exception as error:  # the attacker's own failure is reported, not fatal
        detail = f"attack client error: {type(error).__name__}: {error}"
    probe.running.clear()
    thread.join()
    rss, cgroup = total(peak_rss, edge.pids()), memory.peak_and_reset()
    up = alive(edge)
    p99 = probe.p99_ms()
    passed = (
        up
        and not refuted
        and p99 < p99_bound_ms
        and probe.failures == 0
        and probe.answered() >= PROBE_2XX_AT_LEAST
    )
    memory_text = f"peak RSS {rss / 2**20:5.0f} MiB" if rss else "peak RSS    ? MiB"
    if cgroup is not None:
        memory_text += f" (cgroup {cgroup / 2**20:5.0f} MiB)"
    line = (
        f"{'PASS' if passed else 'FAIL'}  {attack.name:<28} alive={'yes' if up else 'NO '}  "
        f"{memory_text}  probe p99 {p99:6.0f} ms, {probe.answered():4.0%} 2xx, "
        f"{len(probe.latencies)} ok, {probe.shed} shed, "
        f"{probe.failures} failed  [{time.monotonic() - started:4.1f} s] {detail}"
    )
    return passed, line


def target_of(edge: EdgeServer, tables: Path) -> attacks.Target:
    """What the attacker holds: the port, the keys, and a way to start the same edge with
    workers of its own (without the memory limit: the attacked server keeps that)."""

    def workers(count: int) -> contextlib.AbstractContextManager[EdgeServer]:
        return running_edge(edge.name, server_env(tables), workers=count)

    return attacks.Target(edge.port, API_KEY, ADMIN_KEY, tables, workers)


def total(measure: Callable[[int], int | None], pids: list[int]) -> int | None:
    """`measure` summed over the processes that answer it (None if none does)."""
    sizes = [size for size in map(measure, pids) if size is not None]
    return sum(sizes) if sizes else None


def main() -> int:
    """Every attack in turn; a server that dies is reported and started again."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memory-mib", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=12.0, help="length of each attack")
    parser.add_argument("--only", nargs="*", help="names of attacks to run")
    parser.add_argument(
        "--no-latency-bound",
        action="store_true",
        help="report the probe's p99 without judging it (CI: a time depends on the CPU)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="times through the catalogue on one server; with 2 or more, resident memory at the "
        "end is compared with the end of the first",
    )
    parser.add_argument(
        "--memory-tolerance",
        type=float,
        default=0.10,
        help="how far above its start resident memory may end, once every attack is over",
    )
    parser.add_argument(
        "--variant", choices=EDGES, default="ours", help="the edge in front of the app"
    )
    args = parser.parse_args()
    memory = MemoryLimit(args.memory_mib * 2**20)
    if memory.path is None:  # RLIMIT_AS counts reserved address space: give it room
        memory = MemoryLimit(4 * args.memory_mib * 2**20)
    print(f"command: python -m loadtests.attack {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {machine()}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"server: {args.variant}, {memory.kind} for all its processes, 1,024 file "
          "descriptors each")  # fmt: skip
    every = [*attacks.catalogue(args.seconds), *keyless.catalogue(args.seconds)]
    catalogue = [a for a in every if not args.only or a.name in args.only]
    results = []
    with tempfile.TemporaryDirectory() as folder:
        tables = Path(folder)
        attacks.prepare(tables)
        # Round 1 also warms up: the answer cache fills (cache_bytes, by design), tables are
        # added and BLAS buffers made. Memory is compared from the end of round 1 to the end.
        pending = [attack for _ in range(args.rounds) for attack in catalogue]
        warm: int | None = None
        while pending:
            with attacked_server(memory, tables, args.variant) as edge:
                cold, warm = total(rss, edge.pids()), None
                while pending:
                    bound = float("inf") if args.no_latency_bound else PROBE_P99_LIMIT_MS
                    attack = pending.pop(0)
                    if args.variant == "deployed" and len(results) > 0:
                        # Each attack starts from a clean count at the proxy, as a new client.
                        time.sleep(PROXY_WINDOW_SECONDS)
                    passed, line = run_attack(attack, edge, memory, tables, bound)
                    print(line, flush=True)
                    results.append(passed)
                    if not edge.running():
                        print(f"  server died: {edge.log(1500)}")
                        break
                    if len(pending) == len(catalogue) * (args.rounds - 1) and args.rounds > 1:
                        warm = total(rss, edge.pids())
                        print(
                            f"      round 1 over: resident {mib(cold)} when ready, {mib(warm)} now"
                        )
                else:
                    if warm is not None:
                        results.append(memory_returned(edge, warm, args.memory_tolerance))
    memory.remove()
    failed = results.count(False)
    print(f"{len(results) - failed} of {len(results)} checks passed (every attack, then memory)")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0 if failed == 0 else 1


def mib(size: int | None) -> str:
    return "?" if size is None else f"{size / 2**20:.0f} MiB"


def memory_returned(edge: EdgeServer, start: int | None, tolerance: float) -> bool:
    """After the last attack: whether resident memory came back within `tolerance` of what
    it was after the first round (given a few seconds to settle)."""
    end = total(rss, edge.pids())
    for _ in range(10):
        if start is None or end is None or end <= start * (1 + tolerance):
            break
        time.sleep(1)
        end = total(rss, edge.pids())
    if start is None or end is None:
        print("FAIL  resident memory: unreadable")
        return False
    passed = end <= start * (1 + tolerance)
    print(
        f"{'PASS' if passed else 'FAIL'}  resident memory: {start / 2**20:.0f} MiB after round 1, "
        f"{end / 2**20:.0f} MiB after the attacks ({end / start - 1:+.0%}; bound "
        f"+{tolerance:.0%})",
        flush=True,
    )
    return passed


if __name__ == "__main__":
    shutil.which("wrk") or sys.exit("wrk is needed: scripts/install-system-deps")
    sys.exit(main())

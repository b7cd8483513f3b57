"""The service's guarded connection protocol beside the alternatives, attacked and timed in one run.

Run (wrk, nginx and haproxy from Debian; Hypercorn, Granian and zttp are installed into their
own venv on first use, from PyPI; root, to reset the servers' peak memory through /proc):
    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.protocol_alternatives \\
        [--seconds 8] [--rounds 2] [--attack-seconds 5] [--alt-venv DIR] [--only NAME ...]

Every variant serves the same trivial ASGI app (benchmarks/tiny_asgi.py; 200 "ok", `/slow`
after two seconds) with its defaults: uvicorn's httptools, h11 and zttp protocols, the
service's GuardedProtocol (server/protocol.py, default settings), Hypercorn, Granian, and nginx
and haproxy in front of plain uvicorn-httptools. The real service (`python -m service serve`, the
default table, GuardedProtocol under the whole middleware stack) runs beside them.

Each attack of benchmarks/protocol_attacks.py runs once against each variant, for at most
--attack-seconds and --attack-mib sent, stopped at once past 4 GiB resident across the
variant's processes; a variant that stops answering /healthz afterwards is restarted. Then
--rounds of wrk -c32 GET /healthz for --seconds per variant, alternating their order, with the
CPU time of the variant's processes (user + system, all threads, proxies included) per request.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.protocol_attacks import SHAPES, AttackResult, cpu_of, resident, run_attack
from harness.machine import machine
from harness.server import free_port
from harness.wrk import run_wrk

ROOT = Path(__file__).resolve().parent.parent
# zttp: the parser of uvicorn's fourth protocol (`--http zttp`), not in the project's locks.
ALTERNATIVES = ["hypercorn==0.18.0", "granian==2.8.9", "uvicorn[standard]==0.54.0", "zttp==0.0.35"]
CONNECTIONS = 32
BASELINE = "uvicorn-httptools"
PROXIES_CONF = {
    "nginx": """daemon off; worker_processes 1; pid {dir}/nginx.pid; error_log stderr crit;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {dir}/body; proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fcgi; uwsgi_temp_path {dir}/uwsgi; scgi_temp_path {dir}/scgi;
  upstream app {{ server 127.0.0.1:{backend}; keepalive 32; }}
  server {{
    listen 127.0.0.1:{port};
    location / {{ proxy_pass http://app; proxy_http_version 1.1;
                 proxy_set_header Connection ""; }}
  }}
}}
""",
    "haproxy": """global
  maxconn 1024
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
frontend web
  bind 127.0.0.1:{port}
  default_backend app
backend app
  server app 127.0.0.1:{backend}
""",
}


@dataclass
class Variant:
    """One way of serving: the commands it starts (the last one takes the clients' port)."""

    name: str
    commands: Callable[[int, Path], list[list[str]]]
    ready: str = "/healthz"  # answers 200 once the variant serves the app
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    port: int = 0
    idle_rss: int = 0  # bytes resident across its processes once started

    def start(self, scratch: Path) -> None:
        """Start its processes on fresh ports; wait until it is ready."""
        self.port = free_port()
        log = scratch / f"{self.name}.log"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "EMBEDDING_SERVICE_LOG_LEVEL": "warning"}
        for command in self.commands(self.port, scratch):
            with log.open("ab") as out:
                process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
            self.processes.append(process)
        deadline = time.monotonic() + 120
        while not answers(self.port, self.ready):
            if time.monotonic() > deadline or any(p.poll() is not None for p in self.processes):
                raise RuntimeError(f"{self.name} did not start: {log.read_text()[-2000:]}")
            time.sleep(0.2)
        self.idle_rss = sum(map(resident, self.pids()))

    def stop(self) -> None:
        """Stop its processes."""
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes = []

    def pids(self) -> list[int]:
        """Every process of the variant: those started and their children (workers)."""
        started = [p.pid for p in self.processes]
        return started + [pid for pid in all_pids() if parent(pid) in started]


def all_pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


def parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def answers(port: int, path: str = "/healthz") -> bool:
    """GET `path` on a new connection is answered 200 within five seconds."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


TINY = [sys.executable, "-m", "benchmarks.tiny_asgi", "--port"]
APP = "benchmarks.tiny_asgi:app"
Commands = Callable[[int, Path], list[list[str]]]


def under_uvicorn(http: str) -> Commands:
    """The tiny app under uvicorn with protocol `http` (httptools, h11 or guarded)."""
    return lambda port, _: [[*TINY, str(port), "--http", http]]


def behind(proxy: str) -> Commands:
    """The tiny app under uvicorn-httptools, behind `proxy` (nginx or haproxy) at its defaults."""

    def commands(port: int, scratch: Path) -> list[list[str]]:
        backend = free_port()
        folder = Path(tempfile.mkdtemp(dir=scratch))
        folder.chmod(0o777)  # nginx's worker runs as nobody
        conf = folder / f"{proxy}.conf"
        conf.write_text(PROXIES_CONF[proxy].format(dir=folder, port=port, backend=backend))
        if proxy == "nginx":
            run = ["nginx", "-c", str(conf), "-p", str(folder)]
        else:
            run = ["haproxy", "-db", "-f", str(conf)]
        return [[*TINY, str(backend), "--http", "httptools"], run]

    return commands


def variants(alt_python: Path) -> list[Variant]:
    """Every variant measured, the baseline first."""
    alt = alt_python.parent
    zttp = [str(alt_python), "-m", "benchmarks.tiny_asgi", "--http", "zttp", "--port"]
    hypercorn = [str(alt / "hypercorn"), "--bind"]
    granian = [str(alt / "granian"), "--interface", "asgi", "--workers", "1", "--port"]
    service = [sys.executable, "-m", "service", "serve", "--port"]
    return [
        Variant(BASELINE, under_uvicorn("httptools")),
        Variant("uvicorn-h11", under_uvicorn("h11")),
        Variant("uvicorn-zttp", lambda port, _: [[*zttp, str(port)]]),
        Variant("guarded", under_uvicorn("guarded")),
        Variant("hypercorn", lambda port, _: [[*hypercorn, f"127.0.0.1:{port}", APP]]),
        Variant("granian", lambda port, _: [[*granian, str(port), "--log-level", "error", APP]]),
        Variant("nginx+uvicorn", behind("nginx")),
        Variant("haproxy+uvicorn", behind("haproxy")),
        Variant("service", lambda port, _: [[*service, str(port)]], ready="/readyz"),
    ]


def alternatives_python(venv: Path) -> Path:
    """The throwaway venv's python, creating it and installing ALTERNATIVES when they changed."""
    python, installed = venv / "bin" / "python", venv / "alternatives.txt"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    wanted = "\n".join(ALTERNATIVES)
    if not installed.exists() or installed.read_text() != wanted:
        subprocess.run([str(python), "-m", "pip", "install", "-q", *ALTERNATIVES], check=True)
        installed.write_text(wanted)
    return python


def versions(alt_python: Path) -> str:
    """The versions of everything measured."""
    script = "import importlib.metadata as m; print(*(f'{n} {m.version(n)}' for n in %r), sep=', ')"
    ours = ["uvicorn", "httptools", "h11", "uvloop"]
    theirs = ["hypercorn", "granian", "zttp"]
    mine = subprocess.run([sys.executable, "-c", script % ours], capture_output=True, text=True)
    alt = subprocess.run([str(alt_python), "-c", script % theirs], capture_output=True, text=True)
    nginx = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.split("/")[-1]
    haproxy = subprocess.run(["haproxy", "-v"], capture_output=True, text=True).stdout.split()[2]
    return f"{mine.stdout.strip()}, {alt.stdout.strip()}, nginx {nginx.strip()}, haproxy {haproxy}"


ENDINGS = {"time": "open at end", "bytes": "byte bound", "rss": "RSS ceiling"}


def describe(result: AttackResult) -> str:
    """One cell of the attack table."""
    statuses = ",".join(result.statuses) or "none"
    ending = ENDINGS.get(result.stopped_by, f"closed {result.closed_after or 0:.2f}s")
    return (
        f"{result.sent / 2**20:6.1f} MiB sent  {result.peak_rss / 2**20:5.0f} MiB RSS  "
        f"{result.cpu:4.1f} s CPU  {statuses:>7}  {ending}"
    )


def attack_all(chosen: list[Variant], scratch: Path, args: argparse.Namespace) -> None:
    """Every attack against every variant; restart a variant that stops answering."""
    print("\nattacks: MiB sent before the server stopped it (or a bound), peak RSS and CPU")
    print("time of its processes, statuses answered, when the server closed the connection;")
    print("alive: /healthz answered after\n")
    for shape in SHAPES:
        print(shape)
        for variant in chosen:
            bound = args.attack_mib * 2**20
            result = run_attack(variant.port, shape, variant.pids(), args.attack_seconds, bound)
            time.sleep(0.5)
            alive = answers(variant.port)
            line = f"{describe(result)}  alive={'yes' if alive else 'NO'}"
            print(f"  {variant.name:>16}: {line}", flush=True)
            if not alive:
                variant.stop()
                variant.start(scratch)


Run = tuple[float, float, float]  # requests/s, p99 ms, CPU microseconds per request


def timed_run(variant: Variant, seconds: int) -> Run:
    """One wrk run against `variant`, with the CPU its processes spent per request."""
    pids = variant.pids()
    before = sum(map(cpu_of, pids))
    result = run_wrk(f"http://127.0.0.1:{variant.port}/healthz", CONNECTIONS, seconds)
    spent = sum(map(cpu_of, pids)) - before
    run = (result.requests_per_second, result.p99_ms, spent / max(1, result.requests) * 1e6)
    failures = f", {result.failures} failures" if result.failures else ""
    print(f"  {variant.name:>16}: {line_of(run)}{failures}", flush=True)
    return run


def line_of(run: Run) -> str:
    rate, p99, cpu = run
    return f"{rate:8,.0f} req/s, p99 {p99:6.1f} ms, {cpu:5.0f} us CPU/request"


def median_of(runs: list[Run]) -> Run:
    rates, p99s, cpus = zip(*runs, strict=True)
    return statistics.median(rates), statistics.median(p99s), statistics.median(cpus)


def throughput_all(chosen: list[Variant], args: argparse.Namespace) -> None:
    """wrk rounds against every variant, alternating their order; medians and ratios."""
    runs: dict[str, list[Run]] = {variant.name: [] for variant in chosen}
    print(f"\nthroughput: wrk -t2 -c{CONNECTIONS} -d{args.seconds}s GET /healthz")
    for round_ in range(args.rounds):
        print(f"round {round_ + 1}")
        for variant in chosen if round_ % 2 == 0 else chosen[::-1]:
            runs[variant.name].append(timed_run(variant, args.seconds))
    medians = {name: median_of(done) for name, done in runs.items()}
    base = medians.get(BASELINE)
    print()
    for variant in chosen:
        median = medians[variant.name]
        idle = variant.idle_rss / 2**20
        ratio = (
            f", {median[0] / base[0]:.2f}x req/s, {median[2] / base[2]:.2f}x CPU" if base else ""
        )
        print(f"median {variant.name:>16}: {line_of(median)}, idle RSS {idle:4.0f} MiB{ratio}")


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    """Start every variant, attack each, then time each; print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--attack-seconds", type=float, default=5.0)
    parser.add_argument("--attack-mib", type=int, default=512)
    parser.add_argument("--alt-venv", type=Path, default=Path("/tmp/protocol-alt-venv"))
    parser.add_argument("--only", nargs="*", help="variant names to run (default: all)")
    parser.add_argument("--no-throughput", action="store_true")
    args = parser.parse_args()
    print(f"command: python -m benchmarks.protocol_alternatives {' '.join(sys.argv[1:])}")
    now = datetime.datetime.now(datetime.UTC)
    print(f"date: {now:%Y-%m-%d %H:%M} UTC; machine: {machine()}")
    print(f"load before: {load()}")
    alt_python = alternatives_python(args.alt_venv)
    print(f"versions: {versions(alt_python)}")
    chosen = [v for v in variants(alt_python) if not args.only or v.name in args.only]
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        scratch.chmod(0o755)  # nginx's worker (nobody) writes its temporary files below
        try:
            for variant in chosen:
                variant.start(scratch)
            attack_all(chosen, scratch, args)
            if not args.no_throughput:
                throughput_all(chosen, args)
        finally:
            for variant in chosen:
                variant.stop()
    print(f"\nload after: {load()}")


if __name__ == "__main__":
    main()

"""The service behind each of three edges, started alike for side-by-side runs (docs/protocol.md).

- `ours`: `python -m service serve`, the server layer of service/server (GuardedProtocol).
- `granian`: Granian (PyPI, installed on first use into its own folder, outside the venv)
  serving `create_app` as a factory, one worker, its limits set (GRANIAN_LIMITS).
- `haproxy`: Debian's HAProxy (HAPROXY_CONF) in front of plain uvicorn (httptools, uvloop)
  serving `create_app`.
- `deployed`: what docker-compose.yml and deploy/k8s run, one replica: `serve` behind
  deploy/haproxy/haproxy.cfg (its per-client limits included), its connections within the
  1,024 descriptors (PROXY_MAXCONN 480).

Every process of an edge is started with the same environment and the same `preexec` (the
load tests' memory cgroup and 1,024 descriptors); MALLOC_ARENA_MAX gives the app started by
Granian or uvicorn the malloc arenas `serve` sets itself (`heap_arenas`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from deploy.replicas.proxy import CONFIG as PROXY_CONFIG
from deploy.replicas.proxy import servers_config
from deploy.replicas.replica import Replica
from harness.processes import child_pids
from harness.server import free_port, poll_ready
from service.config import Settings

EDGES = ("ours", "granian", "haproxy", "deployed")
APP = "service.api.app:create_app"
GRANIAN = "granian==2.8.9"
GRANIAN_DIR = Path(tempfile.gettempdir()) / f"edge-{GRANIAN.replace('==', '-')}"
START_SECONDS = 120
# The service's own bounds, given to the other edges where they have a setting for them.
DEFAULTS = Settings()
HEAD_TIMEOUT_MS = int(DEFAULTS.header_timeout_seconds * 1000)
# Connections one process may hold: the 1,024 descriptors less 128, as `max_connections`.
CONNECTIONS = 1024 - 128
# Granian's settings for the service's bounds. hyper's read buffer (--http1-buffer-size)
# bounds a request head: 4x max_header_bytes, so a body is still read 64 KiB at a time.
GRANIAN_LIMITS = [
    "--interface", "asgi", "--factory", "--http", "1", "--no-ws", "--loop", "uvloop",
    "--backlog", "2048",  # serve's listen backlog
    "--backpressure", str(CONNECTIONS),  # connections a worker holds; then it stops accepting
    "--http1-buffer-size", str(4 * DEFAULTS.max_header_bytes),
    "--http1-header-read-timeout", str(HEAD_TIMEOUT_MS),
    "--http1-keep-alive", "--log-level", "warning",
]  # fmt: skip
# A well-kept proxy's configuration, shown in full in docs/protocol.md.
HAPROXY_CONF = """global
  maxconn 500                    # two descriptors a proxied connection, within 1,024
  ulimit-n 1024
  tune.bufsize 16384             # bounds a request head, and the body buffered before it is sent on
  tune.maxrewrite 1024
defaults
  mode http
  option http-buffer-request     # wait for the body (or a full buffer) before choosing a server
  option dontlognull
  timeout http-request {head}ms  # the whole head, and the buffered body, within it
  timeout http-keep-alive 5s
  timeout client 30s
  timeout server 60s             # above the slowest answer (a 20,000-question /evaluate)
  timeout connect 5s
  timeout queue 5s
  timeout check 2s
frontend web
  bind 127.0.0.1:{port}
  maxconn 480
  default_backend app
backend app
  option httpchk GET /readyz
  http-check expect status 200
  server app 127.0.0.1:{backend} maxconn {in_flight} check inter 1s  # max_in_flight
"""


@dataclass
class EdgeServer:
    """A running edge: its processes (the last one listens on `port`) and its scratch folder."""

    name: str
    port: int
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    folder: Path | None = None

    def pids(self) -> list[int]:
        """Every process of the edge: those started and their descendants (workers)."""
        found, pending = [], [p.pid for p in self.processes]
        while pending:
            pid = pending.pop()
            found.append(pid)
            pending += child_pids(pid)
        return found

    def supervisor(self) -> int:
        """The process whose children are the app's workers (the first one started)."""
        return self.processes[0].pid

    def workers(self) -> list[int]:
        """The supervisor's children that serve the app (not multiprocessing's resource
        tracker, which uvicorn's supervisor starts beside its workers)."""
        return [pid for pid in child_pids(self.supervisor()) if not _resource_tracker(pid)]

    def running(self) -> bool:
        """Whether every process started is still running."""
        return all(process.poll() is None for process in self.processes)

    def log(self, tail: int = 2000) -> str:
        """The last `tail` characters its processes wrote."""
        assert self.folder is not None
        return (self.folder / "log").read_text(errors="replace")[-tail:]

    def stop(self) -> None:
        """Kill its processes and their workers (none is left orphaned), remove its folder."""
        for pid in self.pids():
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for process in self.processes:
            process.wait(timeout=30)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _resource_tracker(pid: int) -> bool:
    try:
        return b"resource_tracker" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def commands(name: str, port: int, folder: Path, workers: int = 1) -> list[list[str]]:
    """The commands that start edge `name` on `port`, the listening one last."""
    if name in ("ours", "deployed"):
        serve = [sys.executable, "-m", "service", "serve", "--workers", str(workers)]
        if name == "ours":
            return [[*serve, "--port", str(port)]]
        backend = Replica(1, free_port(), [])  # scripts/replicas' backend line for it
        servers = folder / "servers.cfg"
        servers.write_text(servers_config([backend]), encoding="utf-8")
        proxy = [haproxy(), "-db", "-f", str(PROXY_CONFIG), "-f", str(servers)]
        return [[*serve, "--port", str(backend.port)], proxy]
    if name == "granian":
        granian = [sys.executable, "-m", "granian", *GRANIAN_LIMITS, "--workers", str(workers)]
        if workers > 1:
            granian += ["--respawn-failed-workers", "--respawn-interval", "1"]
        return [[*granian, "--port", str(port), APP]]
    backend = free_port()
    uvicorn = [sys.executable, "-m", "uvicorn", "--factory", APP, "--port", str(backend),
               "--http", "httptools", "--loop", "uvloop", "--log-level", "warning",
               "--workers", str(workers)]  # fmt: skip
    conf = folder / "haproxy.cfg"
    conf.write_text(haproxy_conf(port, backend))
    return [uvicorn, [haproxy(), "-db", "-f", str(conf)]]


def haproxy_conf(port: int, backend: int) -> str:
    """HAPROXY_CONF for a front on `port` and uvicorn on `backend`."""
    return HAPROXY_CONF.format(
        head=HEAD_TIMEOUT_MS, port=port, backend=backend, in_flight=DEFAULTS.max_in_flight
    )


def haproxy() -> str:
    """The haproxy executable (Debian's package)."""
    return shutil.which("haproxy") or sys.exit("haproxy is needed: apt-get install haproxy")


def granian_path() -> Path:
    """The folder holding GRANIAN, installed there (pip --target, no dependencies: its one,
    click, is in the venv) the first time."""
    if not (GRANIAN_DIR / "granian").is_dir():
        pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target"]
        subprocess.run([*pip, str(GRANIAN_DIR), GRANIAN], check=True)
    return GRANIAN_DIR


def start_edge(
    name: str,
    env: Mapping[str, str],
    preexec: Callable[[], None] | None = None,
    workers: int = 1,
) -> EdgeServer:
    """Edge `name` on a free port, every process with `env` and `preexec`, once /readyz says
    200 through its port."""
    folder = Path(tempfile.mkdtemp(prefix=f"edge-{name}-"))
    edge = EdgeServer(name, free_port(), folder=folder)
    variables = {**os.environ, "EMBEDDING_SERVICE_LOG_LEVEL": "warning", **env}
    variables.setdefault("MALLOC_ARENA_MAX", str(DEFAULTS.heap_arenas))
    if name == "granian":
        variables["PYTHONPATH"] = str(granian_path())
    if name == "deployed":  # two descriptors a proxied connection, within 1,024
        proxy = {"PROXY_PORT": edge.port, "PROXY_METRICS_PORT": free_port(), "PROXY_MAXCONN": 480}
        variables.update({key: str(value) for key, value in proxy.items()})
    with (folder / "log").open("ab") as log:
        for command in commands(name, edge.port, folder, workers):
            process = subprocess.Popen(
                command, env=variables, preexec_fn=preexec, stdout=log, stderr=log
            )
            edge.processes.append(process)
    try:
        base = f"http://127.0.0.1:{edge.port}"
        poll_ready(base, lambda: None if edge.running() else edge.log(), START_SECONDS)
    except BaseException:
        edge.stop()
        raise
    return edge


@contextmanager
def running_edge(
    name: str,
    env: Mapping[str, str],
    preexec: Callable[[], None] | None = None,
    workers: int = 1,
) -> Iterator[EdgeServer]:
    """start_edge, killed after."""
    edge = start_edge(name, env, preexec, workers)
    try:
        yield edge
    finally:
        edge.stop()

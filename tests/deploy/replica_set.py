"""scripts/replicas started for a test: a prepared table, the replica set, its processes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.processes import child_pids
from harness.server import free_port, poll_ready
from tests.deploy.conftest import REPO

SCRIPT = REPO / "scripts" / "replicas"
CLI = [str(REPO / ".venv" / "bin" / "embedding-service")]
START_SECONDS = 120
WIDTH = 64


def write_text_table(path: Path, vectors: np.ndarray) -> Path:
    """`vectors` as a word2vec text file, row i named w{i}."""
    lines = [f"{len(vectors)} {vectors.shape[1]}"]
    lines += [f"w{i} " + " ".join(f"{x:.6f}" for x in row) for i, row in enumerate(vectors)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def prepare(source: Path, folder: Path) -> None:
    """`embedding-service prepare SOURCE FOLDER` (a new folder renamed over the old one)."""
    subprocess.run([*CLI, "prepare", str(source), str(folder)], check=True, capture_output=True)


def rows_as_read(source: Path) -> np.ndarray:
    """The rows of a text table as the service holds them (float32 of the written text)."""
    lines = source.read_text(encoding="utf-8").splitlines()[1:]
    return np.array([[float(x) for x in line.split()[1:]] for line in lines], dtype=np.float32)


@dataclass
class ReplicaSet:
    """A running scripts/replicas: the supervisor, the proxy's ports, its log."""

    process: subprocess.Popen[bytes]
    port: int
    metrics_port: int
    log: Path

    @property
    def base(self) -> str:
        """The proxy's address."""
        return f"http://127.0.0.1:{self.port}"

    def said(self) -> str:
        """Everything the supervisor, the proxy and the replicas wrote so far."""
        return self.log.read_text(errors="replace")

    def replica_ports(self) -> list[int]:
        """Each replica's own port, in order, as the supervisor announced them."""
        return [int(p) for p in re.findall(r"replica \d+ on http://127.0.0.1:(\d+)", self.said())]

    def replica_pid(self, port: int) -> int | None:
        """The server process listening on a replica's port (a child of the supervisor)."""
        for pid in child_pids(self.process.pid):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in command and str(port).encode() in command:
                return pid
        return None

    def server_up(self, number: int) -> bool:
        """Whether HAProxy says replica `number` is UP (its own Prometheus metrics)."""
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            text = response.read().decode()
        line = f'haproxy_server_status{{proxy="replicas",server="replica{number}",state="UP"}} 1'
        return line in text

    def wait_until_back(self, number: int, killed: int, seconds: float) -> float:
        """Seconds until replica `number`, whose process `killed` was killed, runs again as a
        new process that answers /readyz and that HAProxy says is UP; TimeoutError after."""
        port = self.replica_ports()[number - 1]
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            if self.replica_pid(port) not in (None, killed) and self.back(number, port):
                return time.monotonic() - started
            time.sleep(0.2)
        raise TimeoutError(f"replica {number} not back in {seconds} s:\n{self.said()[-3000:]}")

    def back(self, number: int, port: int) -> bool:
        """Whether replica `number` answers /readyz on its own port and HAProxy says it is UP
        (an UP said before the proxy's checks saw the kill is not enough: /readyz too)."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2):
                pass
        except OSError:
            return False
        return self.server_up(number)

    def wait_for(self, line: str, seconds: float) -> None:
        """Wait until the log says `line`; TimeoutError (with the log) otherwise."""
        deadline = time.monotonic() + seconds
        while line not in self.said():
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise TimeoutError(f"no {line!r} within {seconds} s:\n{self.said()[-3000:]}")
            time.sleep(0.2)


def table_version(base: str, table: str) -> str:
    """GET base/v1/tables/{table}'s version."""
    with urllib.request.urlopen(f"{base}/v1/tables/{table}", timeout=5) as response:
        return str(json.loads(response.read())["version"])


@contextmanager
def running_replicas(
    folder: Path, *serve_args: str, replicas: int = 2, proxy_env: dict[str, str] | None = None
) -> Iterator[ReplicaSet]:
    """scripts/replicas with `replicas` replicas on free ports (`proxy_env`: the proxy's bounds,
    deploy/haproxy/haproxy.cfg), once every one is ready; stopped with SIGTERM after, which must
    stop it cleanly (exit 0, every replica gone)."""
    log = folder / "replicas.log"
    port, metrics_port = free_port(), free_port()
    command = [str(SCRIPT), "--replicas", str(replicas), "--port", str(port)]
    command += ["--metrics-port", str(metrics_port), *serve_args]
    env = {**os.environ, **(proxy_env or {}), "EMBEDDING_SERVICE_LOG_LEVEL": "warning"}
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=out, env=env)
    replica_set = ReplicaSet(process, port, metrics_port, log)
    try:
        poll_ready(replica_set.base, lambda: None if process.poll() is None else replica_set.said())
        replica_set.wait_for("replicas: ready", START_SECONDS)
        pids = [replica_set.replica_pid(p) for p in replica_set.replica_ports()]
        yield replica_set
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=60)
    assert code == 0, replica_set.said()[-3000:]
    assert not [pid for pid in pids if pid is not None and Path(f"/proc/{pid}").exists()]

"""HAProxy in front of the replicas: deploy/haproxy/haproxy.cfg plus one `server` line each."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deploy.replicas.replica import REPOSITORY, Replica

CONFIG = REPOSITORY / "deploy" / "haproxy" / "haproxy.cfg"
# After a soft stop (SIGUSR1: no new connection, those open finish), how long before SIGKILL.
STOP_SECONDS = 10.0


def haproxy() -> str:
    """The haproxy executable; SystemExit naming how to install it."""
    found = shutil.which("haproxy") or next(
        (str(path) for path in (Path("/usr/sbin/haproxy"),) if path.is_file()), None
    )
    if found is None:
        raise SystemExit("replicas: haproxy is needed: scripts/install-system-deps installs it")
    return found


def servers_config(replicas: Sequence[Replica]) -> str:
    """The backend of haproxy.cfg for these replicas, one `server` line each."""
    lines = ["backend replicas from service"]
    lines += [f"  server replica{r.number} 127.0.0.1:{r.port}" for r in replicas]
    return "\n".join(lines) + "\n"


@dataclass
class Proxy:
    """HAProxy on host:port (the service) and host:metrics_port (its own /metrics)."""

    host: str
    port: int
    metrics_port: int
    folder: Path
    process: subprocess.Popen[bytes] | None = None

    def command(self, replicas: Sequence[Replica]) -> list[str]:
        """haproxy in the foreground with the shared configuration and these replicas."""
        servers = self.folder / "servers.cfg"
        servers.write_text(servers_config(replicas), encoding="utf-8")
        return [haproxy(), "-db", "-f", str(CONFIG), "-f", str(servers)]

    def start(self, replicas: Sequence[Replica]) -> None:
        """Start it; it checks each replica's /readyz and sends it nothing until it passes."""
        bounds = {
            "PROXY_BIND": self.host,
            "PROXY_PORT": str(self.port),
            "PROXY_METRICS_PORT": str(self.metrics_port),
        }
        self.process = subprocess.Popen(self.command(replicas), env={**os.environ, **bounds})

    def exited(self) -> int | None:
        """Its exit code once it has exited, else None."""
        return None if self.process is None else self.process.poll()

    def stop(self) -> None:
        """Stop accepting, let the connections open finish, then stop (SIGKILL after a while)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGUSR1)
        try:
            self.process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

"""One replica: a `python -m service serve` process on its own port, started again when it dies."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
# A replica that dies sooner than this after its start is started again only after a pause,
# doubled each time up to the last: a table that cannot load must not spin the machine.
QUICK_EXIT_SECONDS = 10.0
BACKOFF_SECONDS = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def get_json(url: str, timeout: float = 2.0) -> object:
    """GET `url`'s JSON; OSError (URLError, HTTPError) when it cannot be had."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


@dataclass
class Replica:
    """Replica `number` of the set, serving on 127.0.0.1:`port` with `serve_args`."""

    number: int
    port: int
    serve_args: list[str]
    process: subprocess.Popen[bytes] | None = None
    started_at: float = 0.0
    quick_exits: int = 0
    restart_at: float | None = None
    restarts: int = 0

    @property
    def base(self) -> str:
        """Its own address, past the proxy."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start its server process (the interpreter and checkout running this one)."""
        command = [sys.executable, "-m", "service", "serve", "--port", str(self.port)]
        self.process = subprocess.Popen([*command, *self.serve_args], cwd=REPOSITORY)
        self.started_at = time.monotonic()
        self.restart_at = None

    def exited(self) -> int | None:
        """Its exit code once it has exited (a kill: minus the signal), else None."""
        return None if self.process is None else self.process.poll()

    def schedule_restart(self) -> float:
        """When to start it again after it exited: now, or after a pause if it died young."""
        if time.monotonic() - self.started_at < QUICK_EXIT_SECONDS:
            pause = BACKOFF_SECONDS[min(self.quick_exits, len(BACKOFF_SECONDS) - 1)]
            self.quick_exits += 1
        else:
            pause, self.quick_exits = 0.0, 0
        self.restart_at = time.monotonic() + pause
        return pause

    def ready(self) -> bool:
        """Whether its /readyz says 200."""
        try:
            get_json(f"{self.base}/readyz")
        except (OSError, ValueError):
            return False
        return True

    def loaded_at(self) -> dict[str, str]:
        """When each of its tables was loaded (GET /v1/tables), by name; {} if unreachable."""
        try:
            answer = get_json(f"{self.base}/v1/tables")
        except (OSError, ValueError):
            return {}
        assert isinstance(answer, dict)
        return {table["name"]: table["loaded_at"] for table in answer["tables"]}

    def signal(self, number: int) -> None:
        """Send it a signal, if it runs."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(number)

    def stop(self, timeout: float) -> None:
        """SIGTERM (it drains, then stops); SIGKILL if it has not stopped within `timeout`."""
        self.signal(signal.SIGTERM)
        if self.process is None:
            return
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

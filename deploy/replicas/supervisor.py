"""The foreground process of scripts/replicas: the proxy and the replicas, kept running.

A replica that exits is started again (at once, or after a growing pause if it keeps dying
young); the proxy sends it nothing until its /readyz passes. SIGHUP reloads the replicas' tables
one replica at a time (each swaps its new tables in whole, so an answer comes from one version);
SIGTERM or SIGINT stops the proxy softly, then the replicas (each drains), and exits 0. The
proxy exiting on its own stops everything, exit 1.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Sequence
from types import FrameType

from deploy.replicas.proxy import Proxy
from deploy.replicas.replica import Replica

TICK_SECONDS = 0.2
# How long a replica may take to drain and stop after SIGTERM before it is killed: its
# drain_seconds plus shutdown_timeout_seconds by default, and a little more.
REPLICA_STOP_SECONDS = 25.0


def say(message: str) -> None:
    """One line of the supervisor's own, on stderr beside the replicas' logs."""
    print(f"replicas: {message}", file=sys.stderr, flush=True)


class Supervisor:
    """Runs `replicas` behind `proxy` until told to stop."""

    def __init__(self, replicas: Sequence[Replica], proxy: Proxy, reload_seconds: float) -> None:
        self.replicas = list(replicas)
        self.proxy = proxy
        self.reload_seconds = reload_seconds
        self.stopping = threading.Event()
        self.reload_asked = threading.Event()
        self.rollout: threading.Thread | None = None
        self.announced = False

    def on_signal(self, number: int, frame: FrameType | None) -> None:
        """SIGHUP asks for a rolling reload; SIGTERM and SIGINT for a stop."""
        if number == signal.SIGHUP:
            self.reload_asked.set()
        else:
            self.stopping.set()

    def run(self) -> int:
        """Start everything, keep it running, stop it when asked; the exit code."""
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(number, self.on_signal)
        for replica in self.replicas:
            replica.start()
        self.proxy.start(self.replicas)
        try:
            while not self.stopping.wait(TICK_SECONDS):
                if (code := self.proxy.exited()) is not None:
                    say(f"haproxy exited with {code}; stopping the replicas")
                    return 1
                self.tend()
            return 0
        finally:
            self.stop()

    def tend(self) -> None:
        """Restart replicas that exited, start a rollout when asked, say once all are ready."""
        for replica in self.replicas:
            self.restart_if_exited(replica)
        if self.reload_asked.is_set():
            self.reload_asked.clear()
            if self.rollout is not None and self.rollout.is_alive():
                say("SIGHUP: a rolling reload is under way already; ignored")
            else:
                self.rollout = threading.Thread(target=self.reload_one_by_one, daemon=True)
                self.rollout.start()
        if not self.announced and all(replica.ready() for replica in self.replicas):
            self.announced = True
            host = self.proxy.host
            say(f"ready: {len(self.replicas)} replicas behind http://{host}:{self.proxy.port}")

    def restart_if_exited(self, replica: Replica) -> None:
        """Schedule a replica that exited for a restart, and restart it when its time comes."""
        code = replica.exited()
        if code is None:
            return
        if replica.restart_at is None:
            pause = replica.schedule_restart()
            say(f"replica {replica.number} (port {replica.port}) exited with {code}; "
                f"starting it again in {pause:g} s")  # fmt: skip
        if replica.restart_at is not None and time.monotonic() >= replica.restart_at:
            replica.start()
            replica.restarts += 1

    def reload_one_by_one(self) -> None:
        """SIGHUP each replica in turn and wait until every table of it is loaded anew."""
        say("SIGHUP: reloading the tables, one replica at a time")
        for replica in self.replicas:
            before = replica.loaded_at()
            if not before:
                say(f"replica {replica.number} does not answer; rolling reload stopped")
                return
            started = time.monotonic()
            replica.signal(signal.SIGHUP)
            if not self.wait_reloaded(replica, before):
                say(f"replica {replica.number} did not reload every table within "
                    f"{self.reload_seconds:g} s (see its log); rolling reload stopped")  # fmt: skip
                return
            say(f"replica {replica.number} reloaded in {time.monotonic() - started:.1f} s")
        say("rolling reload done")

    def wait_reloaded(self, replica: Replica, before: dict[str, str]) -> bool:
        """Whether every table of `replica` was loaded again (after `before`) in time."""
        deadline = time.monotonic() + self.reload_seconds
        while time.monotonic() < deadline and not self.stopping.is_set():
            now = replica.loaded_at()
            if now.keys() >= before.keys() and all(now[n] != t for n, t in before.items()):
                return True
            time.sleep(TICK_SECONDS)
        return False

    def stop(self) -> None:
        """The proxy first (no new request reaches a stopping replica), then the replicas."""
        say("stopping")
        self.proxy.stop()
        for replica in self.replicas:
            replica.signal(signal.SIGTERM)
        for replica in self.replicas:
            replica.stop(REPLICA_STOP_SECONDS)

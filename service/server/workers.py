"""Several server processes on one port: `workers = N`.

The parent binds the port once and starts N copies of the same `serve` command, each handed the
listening socket (`--listen-fd`): the kernel gives each connection to whichever worker accepts
it first. The first worker serves at once, answering 503 until its tables are loaded
(service/server/serve.py); a later worker loads without accepting anything. Workers start one
after another, each once the previous one has loaded its tables (it says so on a pipe,
`--ready-fd`): the first serves as soon as one process could, loads do not compete for the two
cores, and a bad table stops start-up after one worker's one-line error (measured against
uvicorn's own Multiprocess: docs/server-machinery.md). Each worker is a whole server (its custom
protocol and event loop, its batchers, its share of the answer cache) and loads the tables
itself; a prepared table is memory-mapped, so the workers share one copy of its rows in the page
cache. The parent only passes signals on: SIGTERM and SIGINT to every worker (each drains as a
single server does), SIGHUP and SIGUSR1 to every worker that is ready (each reloads its tables,
or re-reads its keys).

Until the server has started (every worker ready once), a worker that fails (exit code 2: a
bad table; or any death within MIN_LIFETIME_SECONDS) stops them all: a crash loop at start is a
configuration to fix. After that, a worker that dies (the OOM killer's SIGKILL, say) is started
again, forever, with a backoff that doubles while replacements die young (up to
MAX_BACKOFF_SECONDS): the port stays served by the workers that live.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from functools import partial
from types import FrameType

LOGGER = logging.getLogger("service.server.workers")
START_FAILED = 2
READY = b"1"
# At start, a worker that dies sooner than this is a crash loop: the server stops.
MIN_LIFETIME_SECONDS = 10.0
# After the start, a worker that dies young is replaced after a wait that doubles up to this.
FIRST_BACKOFF_SECONDS = 0.5
MAX_BACKOFF_SECONDS = 30.0
# prctl's option: the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1
# Signals passed only to workers that have loaded (a reload, a key re-read).
READY_ONLY = (signal.SIGHUP, signal.SIGUSR1)


class Supervisor:
    """Starts the workers, passes signals on, and waits for them."""

    def __init__(
        self, argv: Sequence[str], sock: socket.socket, workers: int, ready_line: str = ""
    ) -> None:
        self.argv = list(argv)
        self.sock = sock
        self.workers = workers
        self.ready_line = ready_line
        self.children: dict[int, tuple[subprocess.Popen[bytes], float]] = {}
        self.stopping = False
        self.started = False  # every worker has been ready once: the server is up
        # Slots waiting to be started again: when, and the wait that came before.
        self.restart_at: dict[int, float] = {}
        self.backoff: dict[int, float] = {}
        # Workers that have loaded their tables: a SIGHUP or SIGUSR1 goes only to them (one
        # still starting has no handler yet, and reads the files as they are now anyway).
        self.ready: set[int] = set()

    def command(self, slot: int, ready_fd: int) -> list[str]:
        """The worker's command line: the same serve command, with the socket's descriptor and
        the pipe it reports readiness on."""
        fd = str(self.sock.fileno())
        command = [sys.executable, "-m", "service", *self.argv, "--listen-fd", fd,
                   "--ready-fd", str(ready_fd), "--worker", str(slot)]  # fmt: skip
        # Only while no worker serves does a loading one answer 503: else it would take
        # connections from the ones that can answer them.
        return command if not self.ready else [*command, "--quiet-load"]

    def start(self, slot: int) -> bool:
        """Start (or restart) worker `slot` and wait until it has loaded its tables; False when
        it exited instead."""
        read_end, write_end = os.pipe()
        try:
            child = subprocess.Popen(
                self.command(slot, write_end),
                pass_fds=(self.sock.fileno(), write_end),
                preexec_fn=partial(_end_with, os.getpid()),
            )
        finally:
            os.close(write_end)
        self.children[slot] = (child, time.monotonic())
        self.ready.discard(slot)
        with os.fdopen(read_end, "rb") as ready:
            if ready.read(1) != READY:
                return False
        self.ready.add(slot)
        return True

    def forward(self, sig: int, frame: FrameType | None = None) -> None:
        """Pass a signal to every worker; SIGTERM and SIGINT also stop restarts."""
        if sig in (signal.SIGTERM, signal.SIGINT):
            self.stopping = True
        for slot, (child, _) in self.children.items():
            if child.poll() is None and (sig not in READY_ONLY or slot in self.ready):
                child.send_signal(sig)

    def run(self) -> int:
        """Run until every worker has exited; the exit code of the server."""
        for sig in (signal.SIGTERM, signal.SIGINT, *READY_ONLY):
            signal.signal(sig, self.forward)
        for slot in range(self.workers):
            if not self.start(slot) or self.stopping:
                break
        else:
            self.started = True
            if self.ready_line:
                LOGGER.info("%s (%d workers)", self.ready_line, self.workers)
        code = 0
        while self.children or self.restart_at:
            time.sleep(0.2)
            for slot, (child, started) in list(self.children.items()):
                status = child.poll()
                if status is None:
                    continue
                del self.children[slot]
                code = self._after_exit(slot, status, started) or code
            self._restart_due()
        return code

    def _after_exit(self, slot: int, status: int, started: float) -> int:
        """React to worker `slot` exiting with `status`: a code to exit with, or 0."""
        if self.stopping:
            return status if status not in (0, -signal.SIGTERM, -signal.SIGINT) else 0
        lived = time.monotonic() - started
        if not self.started:
            if status == START_FAILED:  # it said why in one line
                self.forward(signal.SIGTERM)
                return START_FAILED
            if lived < MIN_LIFETIME_SECONDS:
                LOGGER.error(
                    "worker %d exited with %d at start: stopping every worker", slot, status
                )
                self.forward(signal.SIGTERM)
                return max(1, status)
        wait = 0.0 if lived >= MIN_LIFETIME_SECONDS else self._next_backoff(slot)
        if lived >= MIN_LIFETIME_SECONDS:
            self.backoff.pop(slot, None)
        LOGGER.error("worker %d exited with %d; starting another in %.1f s", slot, status, wait)
        self.restart_at[slot] = time.monotonic() + wait
        return 0

    def _next_backoff(self, slot: int) -> float:
        previous = self.backoff.get(slot)
        wait = FIRST_BACKOFF_SECONDS if previous is None else min(2 * previous, MAX_BACKOFF_SECONDS)
        self.backoff[slot] = wait
        return wait

    def _restart_due(self) -> None:
        """Start the slots whose wait is over (not while stopping)."""
        now = time.monotonic()
        for slot, due in list(self.restart_at.items()):
            if self.stopping:
                self.restart_at.clear()
                return
            if due <= now:
                del self.restart_at[slot]
                self.start(slot)


def _end_with(supervisor: int) -> None:
    """In a worker, before exec: SIGTERM (a drain, then exit) when the supervisor dies, even of
    SIGKILL. Else its workers serve on as orphans that nobody restarts or stops (seen: every
    test and attack that killed a supervisor left two behind, serving its port)."""
    with contextlib.suppress(OSError, AttributeError):  # Linux only; elsewhere, as before
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != supervisor:  # it died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def run_workers(
    argv: Sequence[str], sock: socket.socket, workers: int, ready_line: str = ""
) -> int:
    """Serve with `workers` processes on `sock`; `ready_line` is logged once all are up."""
    return Supervisor(argv, sock, workers, ready_line).run()


def report_ready(fd: int | None) -> None:
    """In a worker: tell the parent the tables are loaded."""
    if fd is not None:
        os.write(fd, READY)
        os.close(fd)

"""Start the real service as a subprocess on a free port and wait until it is ready."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from typing import IO, Any

START_TIMEOUT = 60
# The stderr file of each server started here, by process id.
LOGS: dict[int, IO[str]] = {}


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_server(
    env: Mapping[str, str] | None = None,
    *args: str,
    cwd: str | None = None,
    open_files: int | None = None,
    python_args: Sequence[str] = ("-m", "service"),
    runner: Sequence[str] = (),
) -> tuple[subprocess.Popen[str], str]:
    """`python -m service serve` with extra env/args on a free port, once ready: (process, URL).

    `cwd` runs the `service` package found there (another checkout, for a side-by-side run);
    `open_files` caps the server's file descriptors (a container's `--ulimit nofile`);
    `python_args` replace `-m service` (a wrapper that runs it, e.g. under a profiler);
    `runner` goes before the interpreter (a command that runs it as another user).
    """
    port = free_port()
    # A file, not a pipe: nobody reads the server's log while it runs, and a full pipe would
    # block the server the moment it logs 64 KiB (a test provoking errors does).
    # Appending: the supervisor and its workers share this file, and O_APPEND writes each line
    # at the end; with a shared offset a worker once overwrote half of the supervisor's line.
    log = tempfile.TemporaryFile("a+", encoding="utf-8")  # noqa: SIM115 (lives with the server)
    process = subprocess.Popen(
        [*runner, sys.executable, *python_args, "serve", "--port", str(port), *args],
        cwd=cwd,
        preexec_fn=None if open_files is None else partial(_limit_open_files, open_files),
        env={**os.environ, "EMBEDDING_SERVICE_LOG_LEVEL": "warning", **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
    )
    LOGS[process.pid] = log
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(base, process)
    except BaseException:
        process.kill()
        process.wait(timeout=30)
        raise
    return process, base


def server_log(process: subprocess.Popen[str], tail: int = 2000) -> str:
    """The last `tail` characters the server wrote to its stderr."""
    log = LOGS[process.pid]
    log.flush()
    log.seek(0)
    return log.read()[-tail:]


@contextmanager
def running_server(
    env: Mapping[str, str] | None = None,
    *args: str,
    cwd: str | None = None,
    open_files: int | None = None,
) -> Iterator[str]:
    """A started server's base URL; stopped with SIGTERM after, and checked to stop cleanly."""
    process, base = start_server(env, *args, cwd=cwd, open_files=open_files)
    try:
        yield base
    finally:
        process.terminate()
        code = process.wait(timeout=30)
    try:
        # uvicorn drains, then re-raises the SIGTERM it caught: both codes mean a clean stop.
        if code not in (0, -signal.SIGTERM):
            raise RuntimeError(f"server exited with {code}: {server_log(process)}")
    finally:
        forget(process)


def forget(process: subprocess.Popen[str]) -> None:
    """Close the log of a server that has stopped."""
    log = LOGS.pop(process.pid, None)
    if log is not None:
        log.close()


def _limit_open_files(count: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, count))


def wait_until_ready(
    base: str,
    process: subprocess.Popen[Any],
    said: Callable[[], str] | None = None,
    timeout: float = START_TIMEOUT,
) -> None:
    """Poll /readyz until 200; fail with what the server said (`said`, by default its stderr
    as start_server keeps it) if it exits first."""
    tell = said or partial(server_log, process)
    poll_ready(base, lambda: None if process.poll() is None else tell(), timeout)


def poll_ready(base: str, exited: Callable[[], str | None], seconds: float = START_TIMEOUT) -> None:
    """Poll `base`/readyz until 200; fail with what `exited()` says once it says something
    (the server's log, once a process of it has exited)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if (log := exited()) is not None:
            raise RuntimeError(f"server exited: {log}")
        try:
            with urllib.request.urlopen(f"{base}/readyz", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"server not ready within {seconds}s")

"""Run wrk against one URL and parse what it reports."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

LUA = Path(__file__).resolve().parent / "post.lua"
THREADS = 2


@dataclass(frozen=True)
class WrkResult:
    """Throughput, latency percentiles (milliseconds) and failures of one wrk run."""

    requests: int
    requests_per_second: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    failures: int


def run_wrk(
    url: str,
    connections: int,
    seconds: int,
    bodies: list[str] | None = None,
    headers: dict[str, str] | None = None,
    threads: int = THREADS,
) -> WrkResult:
    """GET `url` (or POST `bodies` in turn) with `connections` connections for `seconds`."""
    command = [
        "wrk",
        "--latency",
        f"-t{min(threads, connections)}",
        f"-c{connections}",
        f"-d{seconds}s",
        "--timeout",
        "10s",
    ]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    env = dict(os.environ)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as handle:
        if bodies is not None:
            handle.write("\n".join(bodies) + "\n")
            command += ["-s", str(LUA)]
            env.update(WRK_BODIES=handle.name, WRK_THREADS=str(min(threads, connections)))
    try:
        output = subprocess.run(
            [*command, url], capture_output=True, text=True, check=True, env=env
        ).stdout
    finally:
        os.unlink(handle.name)
    return parse(output)


def parse(output: str) -> WrkResult:
    """Pull the figures out of wrk's text report."""
    percentiles = {
        float(p): _milliseconds(value, unit)
        for p, value, unit in re.findall(r"^\s+(\d+)%\s+([\d.]+)(us|ms|s)\s*$", output, re.M)
    }
    requests = int(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    failures = (int(bad.group(1)) if bad else 0) + (sum(map(int, errors.groups())) if errors else 0)
    return WrkResult(requests, rate, percentiles[50], percentiles[90], percentiles[99], failures)


def _milliseconds(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

"""Headless Locust run against a fresh server: CSV + HTML report, SLOs set the exit code.

Run:  .venv/bin/python -m loadtests.run [--users 32] [--seconds 60] [--host URL] [--smoke]
Without --host it starts `embedding-service serve` on a free port and stops it afterwards.
Reports land in loadtests/results/<name>_stats.csv, ..._history.csv and <name>.html.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

from harness.server import running_server

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def locust_command(args: argparse.Namespace, host: str) -> list[str]:
    """The locust invocation for these options."""
    prefix = RESULTS / args.name
    return [
        sys.executable, "-m", "locust", "-f", str(HERE / "locustfile.py"), "--headless",
        "--host", host, "--users", str(args.users), "--spawn-rate", str(args.users),
        "--run-time", f"{args.seconds}s", "--stop-timeout", "10",
        "--csv", str(prefix), "--csv-full-history", "--html", f"{prefix}.html",
        "--slo-error-ratio", str(args.slo_error_ratio),
        "--slo-p95-ms", str(args.slo_p95_ms), "--slo-p99-ms", str(args.slo_p99_ms),
        "--loglevel", "WARNING",
    ]  # fmt: skip


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Options; --smoke is the short CI run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", help="an already running service (default: start one)")
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--name", default="hot_path")
    parser.add_argument("--slo-error-ratio", type=float, default=0.0)
    parser.add_argument("--slo-p95-ms", type=float, default=100.0)
    parser.add_argument("--slo-p99-ms", type=float, default=250.0)
    parser.add_argument("--smoke", action="store_true", help="8 users for 15 s (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.users, args.seconds, args.name = 8, 15, "smoke"
    return args


def main(argv: list[str] | None = None) -> int:
    """Run Locust headless and return its SLO verdict as the exit code."""
    args = parse(argv)
    RESULTS.mkdir(exist_ok=True)
    server = nullcontext(args.host) if args.host else running_server()
    with server as host:
        command = locust_command(args, host)
        print("command:", " ".join(command), flush=True)
        return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())

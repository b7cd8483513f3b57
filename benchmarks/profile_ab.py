"""Where two server variants spend a request's CPU, function by function, side by side.

    .venv/bin/python -m benchmarks.profile_ab --variant before=../wt-before --variant after=. \\
        [--scenario vectors] [--rounds 4] [--seconds 8] [--top 40]

benchmarks.ab_http says how much faster or slower a variant is; this says where. Every variant
runs as its own server (one worker), all started before measuring; in every round each is put
under the same wrk load in turn (the order reversed every other round), while py-spy (the bench
extra) samples it at --rate Hz from outside the process: no profiler inside the server. A
sample's stack is filed under every function on it (inclusive) and under its innermost one
(self); with the requests wrk completed meanwhile, that is microseconds per request. Functions
are named by their file, shortened to the package's own path, so a function that moved between
revisions shows as two lines (one per variant), and the same third-party function as one.
Printed: the command, each run's req/s and the server's CPU time per request (from /proc), then
the functions with the largest inclusive and self times, one column per variant and the
difference of the last from the first, and the functions whose inclusive times differ most.
The samples count the GIL's holder and the BLAS threads alike (py-spy's --native is off: C
functions are filed under their Python caller).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.ab_http import CONNECTIONS, PATHS, Variant, cpu_seconds, order_of, scenarios
from benchmarks.server import start_server
from benchmarks.wrk import run_wrk

# A sample's frame as py-spy writes it: "function (path:line)".
FRAME = re.compile(r"^(?P<function>.*) \((?P<path>[^()]*?)(?::\d+)?\)$")


def py_spy() -> str:
    """py-spy from the bench extra, beside this interpreter or on PATH."""
    beside = Path(sys.executable).with_name("py-spy")
    found = str(beside) if beside.exists() else shutil.which("py-spy")
    if found is None:
        sys.exit("py-spy is not installed: .venv/bin/python -m pip install -e '.[bench]'")
    return found


def frame_name(frame: str, folders: list[str]) -> str:
    """`function (file)`, the file relative to a variant's folder or to site-packages."""
    match = FRAME.match(frame)
    if match is None:
        return frame
    path = match["path"]
    for folder in folders:
        if path.startswith(folder):
            path = path[len(folder) :]
            break
    else:
        path = path.rpartition("site-packages/")[2].rpartition("lib/python3.11/")[2]
    return f"{match['function']} ({path})"


def samples(path: Path, folders: list[str], rate: int) -> tuple[collections.Counter[str], ...]:
    """(inclusive, self) microseconds per function in one py-spy raw file."""
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [frame_name(frame, folders) for frame in stack.split(";")]
        micros = int(count) / rate * 1e6
        own[frames[-1]] += micros
        for name in set(frames):
            inclusive[name] += micros
    return inclusive, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", action="append", type=Variant.parse, required=True)
    parser.add_argument("--scenario", choices=list(PATHS), default="vectors")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rate", type=int, default=400, help="py-spy's samples per second")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    print(f"command: python -m benchmarks.profile_ab {' '.join(sys.argv[1:])}")
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, load average "
          f"{os.getloadavg()[0]:.1f}; {CONNECTIONS} connections", flush=True)  # fmt: skip
    spy = py_spy()
    names = [variant.name for variant in args.variant]
    folders = [str(Path(variant.folder).resolve()) + os.sep for variant in args.variant]
    bodies = scenarios(args.rounds)[args.scenario]
    inclusive = {name: collections.Counter[str]() for name in names}
    own = {name: collections.Counter[str]() for name in names}
    requests, cpu = collections.Counter[str](), collections.Counter[str]()
    with contextlib.ExitStack() as stack:
        output = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        servers = {}
        for variant in args.variant:
            env = {**variant.env, "EMBEDDING_SERVICE_WORKERS": "1"}
            servers[variant.name] = start_server(env, cwd=variant.folder)
            stack.callback(servers[variant.name][0].kill)
        for round_ in range(args.rounds):
            for number in order_of(len(names), round_):
                name = names[number]
                process, base = servers[name]
                raw = output / f"{name}-{round_}.txt"
                command = [spy, "record", "--pid", str(process.pid), "--rate", str(args.rate),
                           "--duration", str(args.seconds), "--format", "raw", "--nonblocking",
                           "--output", str(raw)]  # fmt: skip
                recorder = subprocess.Popen(
                    command,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                before = cpu_seconds(process.pid)
                url = base + PATHS[args.scenario]
                load = bodies[round_]
                result = run_wrk(url, CONNECTIONS, args.seconds, load)
                spent = cpu_seconds(process.pid) - before
                recorder.wait(timeout=60)
                requests[name] += result.requests
                cpu[name] += spent
                print(f"round {round_ + 1} {name}: {result.requests_per_second:,.0f} req/s "
                      f"[{spent / max(1, result.requests) * 1e6:,.0f} us CPU per request]",
                      flush=True)  # fmt: skip
                every, innermost = samples(raw, folders, args.rate)
                inclusive[name].update(every)
                own[name].update(innermost)
    spent = [f"{name} {cpu[name] / max(1, requests[name]) * 1e6:,.0f} us" for name in names]
    print("server CPU per request over all rounds: " + ", ".join(spent))
    for title, table, by_difference in (
        ("inclusive", inclusive, False),
        ("self", own, False),
        ("inclusive, the largest differences", inclusive, True),
    ):
        _print_table(title, table, requests, names, args.top, by_difference)


def _print_table(
    title: str,
    table: dict[str, collections.Counter[str]],
    requests: collections.Counter[str],
    names: list[str],
    top: int,
    by_difference: bool,
) -> None:
    """The `top` functions by their largest time in any variant (or by the largest difference
    between the last variant and the first), us per request."""
    per_request = {
        name: {function: micros / max(1, requests[name]) for function, micros in counts.items()}
        for name, counts in table.items()
    }
    functions = set().union(*per_request.values())

    def rank(function: str) -> float:
        values = [per_request[name].get(function, 0.0) for name in names]
        return -abs(values[-1] - values[0]) if by_difference else -max(values)

    ranked = sorted(functions, key=rank)
    header = "  ".join(f"{name:>9}" for name in names)
    print(f"{title}, us per request (sampled; {names[-1]} - {names[0]} last):")
    print(f"  {header}  {'diff':>8}  function (file)")
    for function in ranked[:top]:
        values = [per_request[name].get(function, 0.0) for name in names]
        cells = "  ".join(f"{value:9.1f}" for value in values)
        print(f"  {cells}  {values[-1] - values[0]:+8.1f}  {function[:110]}")


if __name__ == "__main__":
    main()

"""Which project files one request passes through, on a real server (docs/architecture.md).

    .venv/bin/python -m benchmarks.request_files [--tokens queen prince castle duke empire]
        [--warm 20] [--env NAME=VALUE ...] [--functions]

The service runs as `python -m service serve` in a child process, unchanged, with a profile
function (sys.setprofile and threading.setprofile) installed before it starts. The function
records nothing until SIGUSR2: the script warms the server up with `--warm` requests of other
bodies (so first-call paths do not count) and one diagnostics request (which waits for the
table's start-up diagnostics, computed on a thread), sends SIGUSR2 and waits until the server
says it records, sends one neighbours request for a token (`{"token": T, "k": 3}`, a miss of
the answer cache), and sends SIGUSR2 again, which writes every file under service/ that a
Python frame entered in between, by thread. That is
done once per `--tokens`; a file counts when it was entered in every one of those windows, so
the server's clocks (the guards' sweep, the heap trimmer, the diagnostics' background pass)
that happen to tick inside one window do not count. A file counts when any of its functions
ran (a call, or a C function called from it). `--functions` also names, per file, the functions
called in every window.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from harness.server import start_server

# Installed in the child before `service` is imported: on SIGUSR2 toggle recording; when
# recording stops, write {thread name: [files]} as JSON to the path in REQUEST_FILES_OUT.
PROFILER = r"""
import importlib.util, json, os, runpy, signal, sys, threading
ROOT = importlib.util.find_spec("service").submodule_search_locations[0] + os.sep
seen = {}
state = {"on": False}
FUNCTIONS = bool(os.environ.get("REQUEST_FILES_FUNCTIONS"))
def profile(frame, event, arg):
    if state["on"]:
        name = frame.f_code.co_filename
        if name.startswith(ROOT):
            entry = name[len(ROOT):]
            if FUNCTIONS and event == "call":
                entry += ":" + frame.f_code.co_name
            seen.setdefault(threading.current_thread().name, set()).add(entry)
def toggle(signum, frame):
    if state["on"]:
        state["on"] = False
        with open(os.environ["REQUEST_FILES_OUT"], "w") as out:
            json.dump({thread: sorted(files) for thread, files in seen.items()}, out)
    else:
        seen.clear()
        state["on"] = True
        open(os.environ["REQUEST_FILES_OUT"] + ".on", "w").close()
signal.signal(signal.SIGUSR2, toggle)
sys.setprofile(profile)
threading.setprofile(profile)
sys.argv = ["service", *sys.argv[1:]]
runpy.run_module("service", run_name="__main__", alter_sys=True)
"""


def post(url: str, body: bytes) -> bytes:
    """POST a JSON body; the answer's bytes."""
    request = urllib.request.Request(
        url, data=body, headers={"content-type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.read()


def warm_bodies(count: int) -> list[bytes]:
    """Token queries other than the measured one, so the measured one misses the cache."""
    tokens = ["king", "man", "woman", "paris", "france", "river", "music", "green", "city"]
    return [
        json.dumps({"token": tokens[i % len(tokens)], "k": 4 + i}).encode() for i in range(count)
    ]


def files_entered(pid: int, out: Path, url: str, body: bytes) -> set[str]:
    """The files a Python frame entered, on any thread, while the server answered `body`."""
    out.unlink(missing_ok=True)
    started = out.with_name(out.name + ".on")
    started.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR2)
    # The window is kept as short as the request: the server's loop ticks every 0.1 s.
    for _ in range(5000):
        if started.exists():
            break
        time.sleep(0.001)
    else:
        raise RuntimeError("the server did not start recording")
    post(url, body)
    os.kill(pid, signal.SIGUSR2)
    for _ in range(100):
        if out.exists() and out.stat().st_size:
            break
        time.sleep(0.05)
    by_thread: dict[str, list[str]] = json.loads(out.read_text())
    return {file for files in by_thread.values() for file in files}


def main() -> int:
    """Start a profiled server, send the requests, print the files every one passed through."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--tokens", nargs="+", default=["queen", "prince", "castle", "duke", "empire"]
    )
    parser.add_argument("--warm", type=int, default=20)
    parser.add_argument("--env", nargs="*", default=[], help="NAME=VALUE for the server")
    parser.add_argument(
        "--functions", action="store_true", help="also list the functions called in each file"
    )
    args = parser.parse_args()
    print(f"command: python -m benchmarks.request_files {' '.join(sys.argv[1:])}".rstrip())
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "files.json"
        env = dict(item.split("=", 1) for item in args.env)
        env["REQUEST_FILES_OUT"] = str(out)
        if args.functions:
            env["REQUEST_FILES_FUNCTIONS"] = "1"
        process, base = start_server(env, python_args=("-c", PROFILER))
        try:
            url = f"{base}/v1/tables/minilm/neighbors"
            for body in warm_bodies(args.warm):
                post(url, body)
            # The table's diagnostics are computed on a thread after start-up; a diagnostics
            # request waits for them, so that pass does not run inside a measured window.
            post(f"{base}/v1/tables/minilm/diagnostics", b"{}")
            windows = [
                files_entered(process.pid, out, url, json.dumps({"token": t, "k": 3}).encode())
                for t in args.tokens
            ]
        finally:
            process.kill()
            process.wait()
    always = set.intersection(*windows)
    sometimes = {entry for entry in set.union(*windows) - always if ":" not in entry}
    calls = sorted(entry for entry in always if ":" in entry)
    always = {entry.split(":")[0] for entry in always}
    print(f'requests: POST /v1/tables/minilm/neighbors {{"token": T, "k": 3}}, T in {args.tokens}')
    print(f"{len(always)} project files on every request's path:")
    for file in sorted(always):
        called = [entry.split(":")[1] for entry in calls if entry.split(":")[0] == file]
        print(f"  service/{file}" + (f": {', '.join(called)}" if called else ""))
    if args.functions:
        print(f"{len(calls)} distinct functions called in them")
    print(f"entered in some windows only (the server's clocks): {', '.join(sorted(sometimes))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

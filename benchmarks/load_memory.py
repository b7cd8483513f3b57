"""Peak anonymous memory and time of loading one table in each layout, side by side in one run.

    python -m benchmarks.load_memory /var/tmp/fs3m/table.bin [--layouts columns rows]
        [--variant before=../wt-before --variant after=.] [--rounds 1]

Each (variant, layout) loads the table once per round through the service's own read_spec
(`TableSpec(path=..., layout=...)`, no cache_dir), in a child process of its own, running the
`service` package of the variant's folder; rounds alternate the order. A thread samples the
child's RssAnon (/proc/self/status) every 10 ms: anonymous memory only, so the pages of a
memory-mapped source file, which the kernel can drop, are not counted. Prints the command,
every load, and the rows' own size beside each peak: one copy of the rows is a peak of about
1x their size (plus the interpreter's), a second copy made during the load about 2x.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, threading, time
from service.config import TableSpec
from service.engine.tables.layout import layout_of
from service.loading.tables import read_spec

def anonymous():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) * 1024
    return 0

peak, done = [anonymous()], threading.Event()
def watch():
    while not done.is_set():
        peak[0] = max(peak[0], anonymous())
        time.sleep(0.01)
threading.Thread(target=watch, daemon=True).start()
start = anonymous()
started = time.perf_counter()
table = read_spec(TableSpec(name="x", path=sys.argv[1], layout=sys.argv[2]))
seconds = time.perf_counter() - started
done.set()
peak[0] = max(peak[0], anonymous())
print(json.dumps({"seconds": seconds, "start": start, "peak": peak[0],
                  "rows_bytes": table.vectors.nbytes, "held": layout_of(table.vectors)}))
"""


def load_once(folder: Path, path: Path, layout: str) -> dict[str, float]:
    """One load in a child running the `service` package found in `folder`."""
    env = {**os.environ, "PYTHONPATH": str(folder)}
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), layout],
        cwd=folder, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise SystemExit(f"load failed in {folder}:\n{result.stderr[-3000:]}")
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    """Load the table in every variant and layout; print each load's peak and time."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path, help="a table file the service reads")
    parser.add_argument("--layouts", nargs="+", default=["columns", "rows"])
    parser.add_argument("--variant", action="append", default=[], help="NAME=DIR (default .)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    variants = [item.split("=", 1) for item in args.variant] or [["this", "."]]
    print(f"command: python -m benchmarks.load_memory {shlex.join(sys.argv[1:])}")
    runs = [(name, Path(folder).resolve(), layout) for name, folder in variants
            for layout in args.layouts]  # fmt: skip
    for round_ in range(args.rounds):
        for name, folder, layout in runs if round_ % 2 == 0 else runs[::-1]:
            load = load_once(folder, args.path, layout)
            gib = 2**30
            print(f"round {round_ + 1} {name} layout {layout}: held by {load['held']}, "
                  f"rows {load['rows_bytes'] / gib:.2f} GiB, anonymous memory peak "
                  f"{(load['peak'] - load['start']) / gib:.2f} GiB above the start "
                  f"({(load['peak'] - load['start']) / load['rows_bytes']:.2f}x the rows), "
                  f"{load['seconds']:.1f} s")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

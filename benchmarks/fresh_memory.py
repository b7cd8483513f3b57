"""What filling fresh memory costs on this machine, and why: transparent huge pages.

    .venv/bin/python -m benchmarks.fresh_memory [--rows 1000000] [--width 300] [--rounds 2]

Allocates and fills a rows x width float32 array three ways, alternating: numpy as it comes
(numpy madvises large allocations MADV_HUGEPAGE, and with the kernel's THP defrag set to
`madvise` a fault may compact memory first), numpy with that madvise switched off, and an
anonymous mmap (4 KiB pages). Prints the kernel's THP settings beside the figures. (An earlier
--table option timed `load_table` with numpy's madvise on and off; the word2vec binary loader
now fills its own map of 4 KiB pages, so `benchmarks.huge_pages` measures that choice.)
"""

from __future__ import annotations

import argparse
import gc
import mmap
import os
import time
from pathlib import Path

import numpy as np
from numpy._core import multiarray


def thp_setting(name: str) -> str:
    path = Path("/sys/kernel/mm/transparent_hugepage") / name
    return path.read_text().strip() if path.exists() else "unknown"


def fill(way: str, rows: int, width: int) -> float:
    multiarray._set_madvise_hugepage(way != "numpy, no huge-page madvise")
    started = time.perf_counter()
    if way == "anonymous mmap":
        array = np.frombuffer(mmap.mmap(-1, rows * width * 4), dtype=np.float32)
    else:
        array = np.empty(rows * width, dtype=np.float32)
    array.fill(1.0)
    elapsed = time.perf_counter() - started
    del array
    gc.collect()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--width", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    gigabytes = args.rows * args.width * 4 / 1e9
    print(
        f"command: python -m benchmarks.fresh_memory --rows {args.rows} --width {args.width}"
        f" --rounds {args.rounds}"
    )
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; THP enabled"
        f" {thp_setting('enabled')}, defrag {thp_setting('defrag')}"
    )
    ways = ["numpy", "numpy, no huge-page madvise", "anonymous mmap"]
    for round_ in range(1, args.rounds + 1):
        figures = "  ".join(f"{way} {fill(way, args.rows, args.width):.2f} s" for way in ways)
        print(f"round {round_}, fill {gigabytes:.2f} GB: {figures}", flush=True)
    multiarray._set_madvise_hugepage(True)


if __name__ == "__main__":
    main()

"""Load one word2vec binary with this project's loader and with gensim, side by side.

    python -m benchmarks.load_speed /var/tmp/synthetic-3m.bin --rounds 2

Each round loads the file once with `load_table` and once with gensim's
`KeyedVectors.load_word2vec_format(binary=True)`, the first of the two alternating between
rounds so neither always pays for a cold page cache or fresh memory; one table is held at a
time. Then, untimed, both load it once more and must agree: the same tokens in the same
order and bit-identical vectors, or the run fails. Prints the
command, the machine, every time and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shlex
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from gensim.models import KeyedVectors

from harness.machine import cpu_model
from service.engine.loaders import load_table


def ours(path: Path) -> Any:
    """This project's loader."""
    return load_table(path)


def gensim(path: Path) -> Any:
    """gensim's word2vec binary loader."""
    return KeyedVectors.load_word2vec_format(str(path), binary=True)


LOADERS: dict[str, Callable[[Path], Any]] = {"ours": ours, "gensim": gensim}


def timed(load: Callable[[Path], Any], path: Path) -> tuple[float, Any]:
    """Seconds one load takes, and what it loaded."""
    gc.collect()
    started = time.perf_counter()
    loaded = load(path)
    return time.perf_counter() - started, loaded


def fresh_memory_seconds(nbytes: int) -> float:
    """Seconds to allocate and first touch `nbytes`: a cost both loaders pay for their table."""
    started = time.perf_counter()
    block = np.empty(nbytes, np.uint8)
    block[::4096] = 1
    seconds = time.perf_counter() - started
    del block
    return seconds


def check_identical(path: Path, table: Any) -> None:
    """Fail unless gensim reads exactly the tokens and vectors we read."""
    keyed = gensim(path)
    if list(table.tokens) != keyed.index_to_key:
        raise SystemExit("tokens differ from gensim's")
    if not np.array_equal(table.vectors, keyed.vectors):
        raise SystemExit("vectors differ from gensim's")
    print(f"identical to gensim: {table.rows} tokens, {table.rows} x {table.width} vectors")


def main(argv: list[str] | None = None) -> int:
    """Time both loaders in alternating rounds, print the figures, check the tables agree."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="a word2vec binary (.bin, .bin.gz, .bin.bz2)")
    parser.add_argument("--rounds", type=int, default=2, help="loads per loader (default 2)")
    args = parser.parse_args(argv)
    print("command:", shlex.join([sys.executable, "-m", "benchmarks.load_speed", *sys.argv[1:]]))
    cores = len(os.sched_getaffinity(0))
    print(f"machine: {cpu_model()}, {cores} cores, Python {platform.python_version()}")
    size = args.path.stat().st_size
    print(f"file: {args.path} ({size / 1e9:.2f} GB)")
    print(f"first touch of {size / 1e9:.2f} GB of fresh memory: {fresh_memory_seconds(size):.2f} s")
    times: dict[str, list[float]] = {name: [] for name in LOADERS}
    for round_number in range(args.rounds):
        order = list(LOADERS) if round_number % 2 else list(reversed(LOADERS))
        for name in order:
            seconds, loaded = timed(LOADERS[name], args.path)
            del loaded  # one table at a time
            times[name].append(seconds)
            print(f"round {round_number + 1} {name}: {seconds:.2f} s", flush=True)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"median: ours {medians['ours']:.2f} s, gensim {medians['gensim']:.2f} s; "
          f"ours is {medians['gensim'] / medians['ours']:.1f}x faster")  # fmt: skip
    check_identical(args.path, ours(args.path))
    return 0


if __name__ == "__main__":
    sys.exit(main())

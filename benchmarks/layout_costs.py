"""What each layout of a table's rows costs: gathering candidates, and the exact pass.

    python -m benchmarks.layout_costs [--rows 3000000] [--width 300]

One float32 table of Gaussian rows in memory, held both ways side by side (by columns, as a
table is by default, and row after row, `layout = "rows"`: tables/layout.py), one thread:
- gathering 80 and 1,280 random rows (a query's candidates at k 10 and k_factor 8, and a batch
  of 16 such queries), as rescoring.gather_rows does for each layout, sorted ids, median time;
- the exact pass for 1, 8 and 16 directions, as kernels.by_columns / by_rows compute it over
  blocks of rows, q/s.
Needs twice the table's size in memory (7.2 GB at the default size).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable

import numpy as np

from benchmarks.projection_cost import median_seconds
from service.engine.search.kernels import by_columns, by_rows
from service.engine.search.rescoring import gather_rows
from service.engine.tables.layout import BLOCK_ROWS, blank_columns, blank_rows
from service.engine.threads import limit_compute_threads

GATHERS = (80, 1280)
BATCHES = (1, 8, 16)
PASS_BLOCK = 262_144


def tables(rows: int, width: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The same rows by columns and by rows, filled BLOCK_ROWS at a time."""
    rng = np.random.default_rng(seed)
    columns, by_row = blank_columns(rows, width), blank_rows(rows, width)
    for start in range(0, rows, BLOCK_ROWS):
        block = rng.standard_normal((min(BLOCK_ROWS, rows - start), width), dtype=np.float32)
        columns[start : start + len(block)] = block
        by_row[start : start + len(block)] = block
    return columns, by_row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--width", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    print("command: python -m benchmarks.layout_costs " + shlex.join(sys.argv[1:]), flush=True)
    print(f"table: {args.rows:,} x {args.width} float32, 1 thread, load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    limit_compute_threads(1)
    columns, rows = tables(args.rows, args.width)
    rng = np.random.default_rng(1)
    for count in GATHERS:
        ids = np.sort(rng.choice(args.rows, min(count, args.rows), replace=False))
        assert np.array_equal(gather_rows(columns, ids), gather_rows(rows, ids))
        by_c = median_seconds(lambda ids=ids: gather_rows(columns, ids), args.repeats)
        by_r = median_seconds(lambda ids=ids: gather_rows(rows, ids), args.repeats)
        print(f"gather {count:,} rows: by rows {by_r * 1e6:,.0f} us, by columns "
              f"{by_c * 1e6:,.0f} us ({by_c / by_r:.1f}x)", flush=True)  # fmt: skip
    for batch in BATCHES:
        directions = rng.standard_normal((batch, args.width), dtype=np.float32)

        by_c = median_seconds(lambda d=directions: exact_pass(d, columns, by_columns), 3)
        by_r = median_seconds(lambda d=directions: exact_pass(d, rows, by_rows), 3)
        print(f"exact pass, {batch} direction(s): by rows {batch / by_r:,.1f} q/s, by columns "
              f"{batch / by_c:,.1f} q/s (rows / columns {by_c / by_r:.2f}x)",
              flush=True)  # fmt: skip


def exact_pass(directions: np.ndarray, table: np.ndarray, score: Callable[..., np.ndarray]) -> None:
    """One pass of the served kernel's product over every row, PASS_BLOCK rows at a time."""
    for start in range(0, len(table), PASS_BLOCK):
        score(directions, table[start : start + PASS_BLOCK])


if __name__ == "__main__":
    main()

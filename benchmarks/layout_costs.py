"""What each layout of a table's rows costs: gathering candidates, and the exact pass.

    python -m benchmarks.layout_costs [--rows 3000000] [--width 300] [--gathers 80 1280]
        [--batches 1 8 16] [--panels 16 64 256]

One float32 table of Gaussian rows in memory, held both ways side by side (by columns, as a
table is by default, and row after row, `layout = "rows"`: tables/layout.py), one thread:
- gathering 80 and 1,280 random rows (a query's candidates at k 10 and k_factor 8, and a batch
  of 16 such queries), as rows.gather_rows does for each layout, sorted ids, median time;
- the exact pass for 1, 8 and 16 directions, as rows.by_columns / by_rows compute it over
  blocks of rows, q/s.
With --panels B ..., a third layout for each B, not one the service has: rows in panels of B
rows, each panel stored by columns (width x B), so a row's values lie B floats apart inside one
panel rather than a whole column apart (the layout that might serve both the pass and the
gather); its pass is one product per panel (np.matmul over the stacked panels) and the copy of
the scores into the (directions, rows) matrix the selection reads, its gather a fancy index of
(panel, column, offset). Each figure is printed against the columns'.
Needs twice the table's size in memory (7.2 GB at the default size), three times with --panels.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable

import numpy as np

from benchmarks.projection_cost import median_seconds
from service.engine.search.rows import by_columns, by_rows, gather_rows
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
    parser.add_argument("--gathers", type=int, nargs="+", default=list(GATHERS))
    parser.add_argument("--batches", type=int, nargs="+", default=list(BATCHES))
    parser.add_argument("--panels", type=int, nargs="*", default=[])
    args = parser.parse_args()
    print("command: python -m benchmarks.layout_costs " + shlex.join(sys.argv[1:]), flush=True)
    print(f"table: {args.rows:,} x {args.width} float32, 1 thread, load average "
          f"{os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    limit_compute_threads(1)
    columns, rows = tables(args.rows, args.width)
    rng = np.random.default_rng(1)
    panels = {size: in_panels(rows, size) for size in args.panels}
    for count in args.gathers:
        ids = np.sort(rng.choice(args.rows, min(count, args.rows), replace=False))
        assert np.array_equal(gather_rows(columns, ids), gather_rows(rows, ids))
        by_c = median_seconds(lambda ids=ids: gather_rows(columns, ids), args.repeats)
        by_r = median_seconds(lambda ids=ids: gather_rows(rows, ids), args.repeats)
        print(f"gather {count:,} rows: by rows {by_r * 1e6:,.0f} us, by columns "
              f"{by_c * 1e6:,.0f} us ({by_c / by_r:.1f}x)", flush=True)  # fmt: skip
        for size, stacked in panels.items():
            assert np.array_equal(panel_rows(stacked, ids), gather_rows(rows, ids))
            by_p = median_seconds(lambda s=stacked, ids=ids: panel_rows(s, ids), args.repeats)
            print(f"  in panels of {size}: {by_p * 1e6:,.0f} us ({by_c / by_p:.2f}x as fast "
                  "as by columns)", flush=True)  # fmt: skip
    for batch in args.batches:
        directions = rng.standard_normal((batch, args.width), dtype=np.float32)

        by_c = median_seconds(lambda d=directions: exact_pass(d, columns, by_columns), 3)
        by_r = median_seconds(lambda d=directions: exact_pass(d, rows, by_rows), 3)
        print(f"exact pass, {batch} direction(s): by rows {batch / by_r:,.1f} q/s, by columns "
              f"{batch / by_c:,.1f} q/s (rows / columns {by_c / by_r:.2f}x)",
              flush=True)  # fmt: skip
        for size, stacked in panels.items():
            by_p = median_seconds(lambda d=directions, s=stacked: panel_pass(d, s, args.rows), 3)
            print(f"  in panels of {size}: {batch / by_p:,.1f} q/s ({by_c / by_p:.2f}x the "
                  "columns' speed)", flush=True)  # fmt: skip


def in_panels(rows: np.ndarray, size: int) -> np.ndarray:
    """`rows` as (panels, width, size): each panel of `size` rows stored by columns, the last
    padded with zero rows."""
    count, width = rows.shape
    stacked = np.zeros((-(-count // size), width, size), dtype=np.float32)
    step = max(size, BLOCK_ROWS - BLOCK_ROWS % size)  # whole panels per block
    for start in range(0, count, step):
        block = rows[start : start + step]
        first = start // size
        padded = np.zeros((-(-len(block) // size) * size, width), dtype=np.float32)
        padded[: len(block)] = block
        stacked[first : first + len(padded) // size] = padded.reshape(-1, size, width).transpose(
            0, 2, 1
        )
    return stacked


def panel_rows(stacked: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Rows `ids` of a table in panels, as a (len(ids), width) array."""
    panel, offset = np.divmod(ids, stacked.shape[2])
    return stacked[panel, :, offset]


def panel_pass(directions: np.ndarray, stacked: np.ndarray, rows: int) -> np.ndarray:
    """One product per panel, then the (directions, rows) scores the selection reads."""
    scores = np.matmul(directions, stacked)  # (panels, directions, size)
    return scores.transpose(1, 0, 2).reshape(len(directions), -1)[:, :rows]


def exact_pass(directions: np.ndarray, table: np.ndarray, score: Callable[..., np.ndarray]) -> None:
    """One pass of the served kernel's product over every row, PASS_BLOCK rows at a time."""
    for start in range(0, len(table), PASS_BLOCK):
        score(directions, table[start : start + PASS_BLOCK])


if __name__ == "__main__":
    main()

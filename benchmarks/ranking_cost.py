"""/cosines and /rank at the limits on a table big enough to reach them: the largest answer
max_cosine_rows allows, and the ranking passes over a million rows.

    flock /tmp/embedding-bench.lock .venv/bin/python -m benchmarks.ranking_cost [--rows N]

The default table (MiniLM, 30,522 rows) cannot ask for a page of max_cosine_rows rows;
benchmarks/worst_case.py measures its worst cases. This serves a synthetic table of
max_cosine_rows rows of width 384 (Gaussian rows, written as .npy to a temporary folder) with
the default settings and measures, as worst_case does (in-process, one BLAS thread, median of
--runs): every row's cosine with a token (one page: the largest answer), a 3CosMul of
max_terms terms (its page: max_cosine_rows / max_terms rows), ranks of max_batch others, and
the farthest row's closer rows (a page of max_results).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.worst_case import Driver, measure, row
from harness.machine import machine
from service.api.app import create_app
from service.config import Settings, TableSpec
from service.loading.tables import load_registry

WIDTH = 384


def write_table(folder: Path, rows: int) -> Path:
    """`rows` Gaussian rows of WIDTH as big.npy + big.vocab (tokens w0, w1, ...)."""
    vectors = np.lib.format.open_memmap(
        folder / "big.npy", mode="w+", dtype=np.float32, shape=(rows, WIDTH)
    )
    rng = np.random.default_rng(0)
    for start in range(0, rows, 65_536):
        stop = min(start + 65_536, rows)
        vectors[start:stop] = rng.normal(size=(stop - start, WIDTH))
    vectors.flush()
    (folder / "big.vocab").write_text("".join(f"w{i}\n" for i in range(rows)), encoding="utf-8")
    return folder / "big.npy"


def requests(settings: Settings, far: str) -> list[tuple[str, str, Any]]:
    """(name, path, body) of the ranking requests at the default limits."""
    terms = [f"w{i}" for i in range(1, settings.max_terms + 1)]
    return [
        ("cosines: one token, a page of max_cosine_rows rows", "cosines", {"token": "w0"}),
        ("cosines: 3CosMul of 16 terms, its page (65,536 rows)", "cosines",
         {"positive": terms, "method": "mul"}),
        ("rank: 256 others, one pass", "rank",
         {"token": "w0", "others": [f"w{i}" for i in range(1, settings.max_batch + 1)]}),
        ("rank: the farthest row, closer_rows of max_results", "rank",
         {"token": "w0", "others": [far], "closer_rows": {}}),
    ]  # fmt: skip


async def run(rows: int, runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = write_table(Path(folder), rows)
        spec = TableSpec(name="big", path=path, vocab=path.with_suffix(".vocab"))
        settings = Settings(tables=[spec])
        registry = load_registry(settings)
        table = registry.get("big").table
        cosines = table.vectors @ table.vectors[0] / table.norms
        far = table.tokens[int(np.argmin(cosines))]
        app = create_app(settings, registry)
        driver = Driver(app, "/v1/tables/big")
        async with app.router.lifespan_context(app):
            print(f"{'request':<55} {'time':>9} {'loop':>8} {'peak memory':>12} {'answer':>9}")
            for name, operation, body in requests(settings, far):
                data = json.dumps(body).encode()
                seconds, block, peak, size = await measure(driver, operation, data, runs)
                row(name, seconds, block, peak, size, f"body {len(data) / 2**20:.2f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=Settings().max_cosine_rows)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"command: python -m benchmarks.ranking_cost {' '.join(sys.argv[1:])}".rstrip())
    load = os.getloadavg()[0]
    print(f"machine: {machine()}, load average {load:.1f}; default settings; "
          f"a table of {args.rows:,} x {WIDTH}")  # fmt: skip
    asyncio.run(run(args.rows, args.runs))


if __name__ == "__main__":
    main()

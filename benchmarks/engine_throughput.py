"""In-process neighbour throughput on the default table: one query per search vs batches.

Run: .venv/bin/python -m benchmarks.engine_throughput [--seconds 3] [--batch 1 32 128 512]
Every configuration is measured in the same run, so the ratios hold on a noisy machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import faiss
import numpy as np

from service.config import default_table
from service.engine.index import NeighborQuery, SimilarityIndex
from service.engine.loaders import load_huggingface


def queries_per_second(
    index: SimilarityIndex, rows: np.ndarray, batch: int, seconds: float
) -> float:
    """Neighbour queries (k=10, query token excluded) answered per second in batches of `batch`."""
    queries = [NeighborQuery(index.table.vectors[r], 10, frozenset({int(r)})) for r in rows]
    done, started, position = 0, time.perf_counter(), 0
    while time.perf_counter() - started < seconds:
        chunk = queries[position : position + batch]
        index.neighbors(chunk)
        done += len(chunk)
        position = (position + batch) % (len(queries) - batch)
    return done / (time.perf_counter() - started)


def blas_description() -> str:
    """The BLAS libraries numpy and FAISS run on, with their kernels and thread counts."""
    from threadpoolctl import threadpool_info

    return ", ".join(
        f"{pool['internal_api']} {pool.get('architecture') or ''} x{pool['num_threads']}".strip()
        for pool in threadpool_info()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="time per configuration")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 32, 128, 512])
    args = parser.parse_args()
    spec = default_table()
    assert spec.path is not None
    index = SimilarityIndex(load_huggingface(spec.path))
    rows = np.random.default_rng(0).integers(0, index.table.rows, size=20_000)
    command = ["python", "-m", "benchmarks.engine_throughput", *sys.argv[1:]]
    print(f"command: {' '.join(command)}")
    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, faiss {faiss.__version__}; "
        f"{blas_description()}"
    )
    print(f"table: {index.table.rows} x {index.table.width}")
    print(f"{'batch':>6} {'queries/s':>11} {'vs batch 1':>11}")
    baseline = None
    for batch in args.batch:
        rate = queries_per_second(index, rows, batch, args.seconds)
        baseline = baseline or rate
        print(f"{batch:>6} {rate:>11,.0f} {rate / baseline:>10.1f}x")


if __name__ == "__main__":
    main()

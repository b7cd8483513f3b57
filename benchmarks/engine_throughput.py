"""In-process neighbour throughput on the default table, by batch size and search kernel.

Run: .venv/bin/python -m benchmarks.engine_throughput [--seconds 2] [--batch 1 16 32 128 512]
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

KERNELS = ("blas", "faiss")


def blas_description() -> str:
    """The BLAS libraries numpy and FAISS run on, with their kernels and thread counts."""
    from threadpoolctl import threadpool_info

    return ", ".join(
        f"{pool['internal_api']} {pool.get('architecture') or ''} x{pool['num_threads']}".strip()
        for pool in threadpool_info()
    )


def queries_per_second(
    index: SimilarityIndex, rows: np.ndarray, batch: int, seconds: float
) -> float:
    """Neighbour queries (k=10, query token excluded) answered per second in batches of `batch`."""
    vectors = index.table.vectors
    queries = [index.prepare(NeighborQuery(vectors[r], 10, frozenset({int(r)}))) for r in rows]
    done, started, position = 0, time.perf_counter(), 0
    while time.perf_counter() - started < seconds:
        chunk = queries[position : position + batch]
        index.search(chunk)
        done += len(chunk)
        position = (position + batch) % (len(queries) - batch)
    return done / (time.perf_counter() - started)


def main() -> None:
    """Print queries/second for every batch size and kernel, and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="time per configuration")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 16, 32, 128, 512])
    args = parser.parse_args()
    table = load_huggingface(default_table().path)
    indexes = {kernel: SimilarityIndex(table, kernel) for kernel in KERNELS}
    rows = np.random.default_rng(0).integers(0, table.rows, size=20_000)
    command = ["python", "-m", "benchmarks.engine_throughput", *sys.argv[1:]]
    print(f"command: {' '.join(command)}")
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, faiss {faiss.__version__}; "
          f"{blas_description()}")  # fmt: skip
    print(f"table: {table.rows} x {table.width}")
    # Kernel by kernel: FAISS's OpenMP threads keep spinning after a search and would slow a
    # BLAS measurement that followed it directly.
    rates = {
        (kernel, batch): queries_per_second(index, rows, batch, args.seconds)
        for kernel, index in indexes.items()
        for batch in args.batch
    }
    print(f"{'batch':>6} {'blas q/s':>10} {'faiss q/s':>10} {'blas/faiss':>11} {'blas vs 1':>10}")
    for batch in args.batch:
        blas, faiss_rate = rates["blas", batch], rates["faiss", batch]
        print(
            f"{batch:>6} {blas:>10,.0f} {faiss_rate:>10,.0f} "
            f"{blas / faiss_rate:>10.1f}x {blas / rates['blas', args.batch[0]]:>9.1f}x"
        )


if __name__ == "__main__":
    main()

"""In-process neighbour throughput on the default table, by batch size and search kernel.

Run: .venv/bin/python -m benchmarks.engine_throughput [--seconds 2] [--batch 1 16 32 128 512]
Every configuration is measured in the same run, so the ratios hold on a noisy machine: the
service's kernel over the raw rows ("raw", one copy of the table), the kernel it replaced (a
transposed unit copy, benchmarks/legacy_kernel.py) and FAISS's IndexFlatIP, in `--rounds`
rounds that alternate their order; the median round is printed.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import faiss
import numpy as np

from benchmarks.legacy_kernel import TransposedUnitKernel
from service.config import default_table
from service.engine.loaders import load_huggingface
from service.engine.search.cosine import CosineSearch, NeighborQuery
from service.engine.tables.table import EmbeddingTable

KERNELS = ("raw", "unit-transposed", "faiss")


def indexes(table: EmbeddingTable) -> dict[str, CosineSearch]:
    """One index per kernel over the same table (the legacy kernel swapped into an index)."""
    legacy = CosineSearch(table)
    legacy.kernel = TransposedUnitKernel(legacy.store)
    return {"raw": CosineSearch(table), "unit-transposed": legacy,
            "faiss": CosineSearch(table, "faiss")}  # fmt: skip


def blas_description() -> str:
    """The BLAS libraries numpy and FAISS run on, with their kernels and thread counts."""
    from threadpoolctl import threadpool_info

    return ", ".join(
        f"{pool['internal_api']} {pool.get('architecture') or ''} x{pool['num_threads']}".strip()
        for pool in threadpool_info()
    )


def queries_per_second(index: CosineSearch, rows: np.ndarray, batch: int, seconds: float) -> float:
    """Neighbour queries (k=10, query token excluded) answered per second in batches of `batch`."""
    vectors = index.table.vectors
    queries = [index.plan(NeighborQuery(vectors[r], 10, frozenset({int(r)}))) for r in rows]
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
    parser.add_argument("--rounds", type=int, default=3, help="rounds, alternating the order")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (served: 1)")
    args = parser.parse_args()
    from service.engine.threads import limit_compute_threads

    limit_compute_threads(args.threads)
    table = load_huggingface(default_table().path)
    by_kernel = indexes(table)
    rows = np.random.default_rng(0).integers(0, table.rows, size=20_000)
    command = ["python", "-m", "benchmarks.engine_throughput", *sys.argv[1:]]
    print(f"command: {' '.join(command)}")
    print(f"machine: {os.cpu_count()} cores, {platform.machine()}, faiss {faiss.__version__}; "
          f"{blas_description()}; load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"table: {table.rows} x {table.width}, {table.vectors.nbytes / 2**20:.1f} MiB of rows")
    for kernel, index in by_kernel.items():
        print(f"  {kernel}: {index.kind}; kernel holds {index.kernel.nbytes / 2**20:.1f} MiB, "
              f"index bytes {index.nbytes / 2**20:.1f} MiB")  # fmt: skip
    # Kernel by kernel within a round: FAISS's OpenMP threads keep spinning after a search and
    # would slow a BLAS measurement that followed it directly.
    rounds: dict[tuple[str, int], list[float]] = {}
    for round_ in range(args.rounds):
        order = list(KERNELS) if round_ % 2 == 0 else list(reversed(KERNELS))
        for kernel in order:
            for batch in args.batch:
                rate = queries_per_second(by_kernel[kernel], rows, batch, args.seconds)
                rounds.setdefault((kernel, batch), []).append(rate)
    rates = {key: float(np.median(values)) for key, values in rounds.items()}
    header = " ".join(f"{kernel + ' q/s':>20}" for kernel in KERNELS)
    print(f"{'batch':>6} {header} {'raw/unit-transposed':>20} {'raw/faiss':>10}")
    for batch in args.batch:
        cells = " ".join(f"{rates[kernel, batch]:>20,.0f}" for kernel in KERNELS)
        old, fa = rates["unit-transposed", batch], rates["faiss", batch]
        raw = rates["raw", batch]
        print(f"{batch:>6} {cells} {raw / old:>19.2f}x {raw / fa:>9.2f}x")
    print("every round (q/s): " + "; ".join(
        f"{k} b{b}: " + "/".join(f"{v:,.0f}" for v in values)
        for (k, b), values in rounds.items()))  # fmt: skip


if __name__ == "__main__":
    main()

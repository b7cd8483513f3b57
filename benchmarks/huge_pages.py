"""What huge pages give and cost a table held in anonymous memory: fill time against search time.

    .venv/bin/python -m benchmarks.huge_pages /var/tmp/bigtables/syn-3m.bin --rounds 3

numpy madvises its large allocations MADV_HUGEPAGE; on this virtual machine first touching
huge pages costs several times what 4 KiB pages do, which is why
tables above tables/layout.HUGE_PAGES_UP_TO are written into a populated private map of 4 KiB
pages (tables/layout.blank_columns). Rows on 2 MiB pages are in turn searched faster (fewer TLB
misses). This loads the table once, then each round copies its rows into fresh memory both
ways, by columns as the service holds them (np.empty with numpy's madvise on; a populated map
of 4 KiB pages), alternating which goes first,
one copy held at a time, and on each copy times the exact path: single-vector neighbour
queries (k 10) and batches of 32 through `CosineSearch.neighbors`, with the same seeded
query rows. AnonHugePages (/proc/self/smaps_rollup) says which pages each copy had. Prints the
command, the machine, every figure and the medians' ratios.
"""

from __future__ import annotations

import argparse
import gc
import mmap
import os
import statistics
import time
from pathlib import Path

import numpy as np
from numpy._core import multiarray

from harness.machine import machine
from service.engine.loaders import load_table
from service.engine.search.cosine import CosineSearch, NeighborQuery
from service.engine.tables.table import EmbeddingTable

WAYS = {"huge pages (numpy's madvise)": True, "4 KiB pages (a populated map)": False}


def thp_setting(name: str) -> str:
    """The kernel's transparent-huge-page setting `name` (enabled, defrag)."""
    path = Path("/sys/kernel/mm/transparent_hugepage") / name
    return path.read_text().strip() if path.exists() else "unknown"


def anon_huge_gb() -> float:
    """GB of this process's anonymous memory on transparent huge pages."""
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("AnonHugePages:"):
            return int(line.split()[1]) / 1e6
    return 0.0


def timed_queries(index: CosineSearch, rows: np.ndarray, batch: int, seconds: float) -> float:
    """Queries per second of the exact path over `seconds`, `batch` queries per call."""
    vectors = index.table.vectors
    done = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        chosen = rows[(done + np.arange(batch)) % len(rows)]
        index.neighbors([NeighborQuery(vectors[row].copy(), 10) for row in chosen])
        done += batch
    return done / (time.perf_counter() - started)


def fresh_rows(shape: tuple[int, int], hugepage: bool) -> np.ndarray:
    if hugepage:
        multiarray._set_madvise_hugepage(True)
        return np.empty(shape, dtype=np.float32, order="F")
    rows, width = shape
    memory = mmap.mmap(-1, rows * width * 4, flags=mmap.MAP_PRIVATE | mmap.MAP_POPULATE)
    return np.frombuffer(memory, dtype="<f4").reshape(width, rows).T


def one_round(table: EmbeddingTable, hugepage: bool, seconds: float) -> dict[str, float]:
    gc.collect()
    started = time.perf_counter()
    rows = fresh_rows(table.vectors.shape, hugepage)
    rows[:] = table.vectors
    fill = time.perf_counter() - started
    huge = anon_huge_gb()
    copy = EmbeddingTable(table.vocabulary, rows, source=table.source)
    index = CosineSearch(copy)
    chosen = np.random.default_rng(0).choice(copy.rows, 512, replace=False)
    timed_queries(index, chosen, 1, 1.0)  # warm: caches settle
    single = timed_queries(index, chosen, 1, seconds)
    batched = timed_queries(index, chosen, 32, seconds)
    del index, copy, rows
    gc.collect()
    return {"fill s": fill, "single q/s": single, "batch-32 q/s": batched, "huge GB": huge}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("table", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    print(f"command: python -m benchmarks.huge_pages {args.table} --rounds {args.rounds}")
    print(
        f"machine: {machine()}, load average {os.getloadavg()[0]:.1f}; THP enabled"
        f" {thp_setting('enabled')}, defrag {thp_setting('defrag')}"
    )
    table = load_table(args.table)
    results: dict[str, list[dict[str, float]]] = {way: [] for way in WAYS}
    for round_ in range(1, args.rounds + 1):
        order = list(WAYS) if round_ % 2 else list(reversed(WAYS))
        for way in order:
            figures = one_round(table, WAYS[way], args.seconds)
            results[way].append(figures)
            shown = "  ".join(f"{name} {value:,.2f}" for name, value in figures.items())
            print(f"round {round_}, {way}: {shown}  (load {os.getloadavg()[0]:.1f})", flush=True)
    medians = {
        way: {name: statistics.median(r[name] for r in runs) for name in runs[0]}
        for way, runs in results.items()
    }
    huge, small = (medians[way] for way in WAYS)
    for name in ("fill s", "single q/s", "batch-32 q/s"):
        print(
            f"median {name}: huge pages {huge[name]:,.2f}, 4 KiB pages {small[name]:,.2f}"
            f" (4 KiB / huge = {small[name] / huge[name]:.2f})"
        )


if __name__ == "__main__":
    main()

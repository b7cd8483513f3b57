"""In-process neighbour throughput on the default table, by batch size and exact pass: the
measurement that chooses the pass (docs/exact-pass.md).

Run: .venv/bin/python -m benchmarks.engine_throughput [--seconds 0.3] [--rounds 5]
     [--batch 1 8 16 32 64 128 256] [--blas-from 4] [--check 0.95]

Every candidate is the service's own whole search (CosineSearch: the pass, the selection of
candidates, the exact float64 rescoring) over the same table, as it would be served:

- compiled: the pass of search/dots.c over the rows stored by columns where it serves (AVX-512,
  rows.COMPILED_FROM to COMPILED_UNTIL directions), BLAS's elsewhere, and dots.c's selection
  and rescoring (search_kernel=compiled);
- blas columns: BLAS over the rows stored by columns (search_kernel=blas; numpy selects and
  rescores, as for every candidate below);
- blas rows: the same rows stored row after row, with that layout's best products (FAISS's
  inner products for 1-3 directions, rows @ Q.T up to 16, Q @ rows.T beyond);
- blas unit: BLAS over a second, unit-normalised copy stored transposed
  (benchmarks/legacy_kernel.py);
- faiss default: FAISS's knn_inner_product (what IndexFlatIP.search runs) over a unit copy,
  with FAISS's own settings: below distance_compute_blas_threshold (directions x width;
  128,000 in FAISS 1.15) it scores row by row with its SIMD inner products, from it by BLAS;
- faiss blas: the same with the threshold at 1 (BLAS at every batch size);
- faiss from N: the threshold at N x width (BLAS from N directions; --blas-from), as
  search_kernel=faiss serves it;
- from N, rows: the same, the raw rows (read by the rescoring) stored row after row.

dots.c's AVX2 kernels, and its pass alone with numpy's steps, were measured beside these at
commit 3dbe404 (a worktree there builds them): docs/exact-pass.md has both runs.

The candidates take turns at each batch size (each turn WARM_SECONDS of untimed batches, then
TURN_SECONDS of timed ones, as the server's search thread runs one pass batch after batch; the
order shuffled every time), in `--rounds` rounds; the median round is printed, and each ratio
is the median of the rounds' own ratios (both sides measured in the same round), so a drift of a
shared machine's speed touches every candidate alike. "served" is the candidate the service's
default settings run. With --check R the script exits 1 when served is below R times the best
candidate at any batch size: a ratio in one run, never an absolute time, and never in the test
suite (a ratio that holds on one CPU fails on another).

To measure what a CPU with AVX2 and no AVX-512 runs (the same memory and clock, so an
approximation), cap both libraries at AVX2 and keep dots.c off:
OPENBLAS_CORETYPE=Haswell FAISS_OPT_LEVEL=avx2 ... --without-avx512.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import faiss
import numpy as np

from benchmarks.legacy_kernel import TransposedUnitKernel
from harness.machine import machine
from service.config import Settings, default_table
from service.engine.loaders import load_huggingface
from service.engine.search import dots
from service.engine.search.cosine import CosineSearch, NeighborQuery
from service.engine.search.kernels import BLAS_FROM, BlasKernel, FaissKernel
from service.engine.search.products import SMALL_BATCH, inner_products
from service.engine.search.queries import Plan
from service.engine.tables.table import EmbeddingTable

# rows @ Q.T beats Q @ rows.T on row-order rows up to this many directions (measured here).
ROWS_FIRST_ON_ROWS = 16
# FAISS's own threshold, read once before any candidate changes it.
FAISS_DEFAULT = faiss.cvar.distance_compute_blas_threshold


class RowOrderKernel(BlasKernel):
    """The BLAS kernel's arithmetic on rows stored row after row, with that layout's best
    products: FAISS's inner products, rows @ Q.T (transposed), or Q @ rows.T."""

    def scores(self, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
        """(batch, stop - start) float32 cosines with rows start..stop."""
        rows = self.vectors[start:stop]
        scaled = np.ascontiguousarray(directions * self.direction_scale, dtype=np.float32)
        if len(directions) <= SMALL_BATCH:
            products = inner_products(scaled, rows)
        elif len(directions) <= ROWS_FIRST_ON_ROWS:
            products = np.ascontiguousarray((rows @ scaled.T).T)
        else:
            products = scaled @ rows.T
        products *= self.scales[start:stop]
        return products


@dataclass
class Candidate:
    """A search to measure."""

    search: CosineSearch

    def configure(self) -> None:
        """FAISS's threshold back at its default before each turn (the tuned candidates set
        their own for each call), outside the timing."""
        faiss.cvar.distance_compute_blas_threshold = FAISS_DEFAULT


def faiss_search(table: EmbeddingTable, blas_from: int | None) -> CosineSearch:
    """A search by FAISS's knn, BLAS from `blas_from` directions (None: FAISS's default)."""
    search = CosineSearch(table)
    search.kernel = FaissKernel(search.store, blas_from)
    return search


def candidates(table: EmbeddingTable, blas_from: list[int]) -> dict[str, Candidate]:
    """Every candidate over the same table (its rows stored by columns, as served)."""
    by_rows = EmbeddingTable(
        table.tokens, np.ascontiguousarray(table.vectors), checked=True, stored_norms=table.norms64
    )
    row_order = CosineSearch(by_rows, "blas")
    row_order.kernel = RowOrderKernel(row_order.store)
    unit = CosineSearch(table)
    unit.kernel = TransposedUnitKernel(unit.store)
    found = {
        "compiled": Candidate(CosineSearch(table, "compiled")),
        "blas columns": Candidate(CosineSearch(table, "blas")),
        "blas rows": Candidate(row_order),
        "blas unit": Candidate(unit),
        "faiss default": Candidate(faiss_search(table, None)),
        "faiss blas": Candidate(faiss_search(table, 1)),
    }
    for count in blas_from:
        found[f"faiss from {count}"] = Candidate(faiss_search(table, count))
    found[f"from {blas_from[0]}, rows"] = Candidate(faiss_search(by_rows, blas_from[0]))
    return found


def served_name() -> str:
    """The candidate the service's default settings run."""
    kernel = Settings().search_kernel
    if kernel == "faiss":
        return f"faiss from {BLAS_FROM}"
    return "compiled" if kernel == "compiled" else "blas columns"


def planned(search: CosineSearch, rows: np.ndarray) -> list[Plan]:
    """Neighbour queries (k=10, query token excluded) of `rows`, planned once per search."""
    vectors = search.table.vectors
    return [search.plan(NeighborQuery(vectors[r], 10, frozenset({int(r)}))) for r in rows]


# Each turn, a candidate runs batch after batch, as the server's search thread does: for
# WARM_SECONDS untimed (at least one batch), bringing back its own state after another
# candidate's (its rows in the caches, its buffers in the allocator), then for TURN_SECONDS
# timed (at least one batch). Turns of one timed batch each, in a fixed rotation, had compiled
# at 0.85-0.88x blas columns at 8-32 directions with eight candidates, where it ran 1.05-1.65x
# head to head and over HTTP: its pass reaches its speed only after a few batches over the same
# rows, BLAS's streaming from the first (docs/exact-pass.md, 2026-12-06). The order of the
# turns is shuffled anew every time.
WARM_SECONDS = 0.03
TURN_SECONDS = 0.06


def evictor(mib: int) -> Callable[[], None]:
    """A call that reads and writes `mib` MiB (untimed), so that the next batch finds none of
    the table in the CPU's caches: a table larger than the last-level cache, or a neighbour
    that uses it. Does nothing for 0."""
    if not mib:
        return lambda: None
    sweep = np.ones(mib * 2**20 // 8)

    def evict() -> None:
        sweep[::8] += 1.0  # one write per 64-byte line

    return evict


def turns_per_second(
    by_name: dict[str, Candidate],
    queries: dict[str, list[Plan]],
    batch: int,
    seconds: float,
    evict: Callable[[], None],
) -> dict[str, float]:
    """Planned queries answered per second by each candidate in batches of `batch`, taking
    turns (the order shuffled every time; see WARM_SECONDS) until each has run for `seconds`
    timed; `evict` runs before every timed batch."""
    names = list(by_name)
    spent, done = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0)
    plans = len(queries[names[0]])
    position = 0
    shuffled = random.Random(batch)

    def chunk(name: str) -> list[Plan]:
        nonlocal position
        position = (position + batch) % (plans - batch)
        return queries[name][position : position + batch]

    while min(spent.values()) < seconds:
        for name in shuffled.sample(names, len(names)):
            search = by_name[name].search
            by_name[name].configure()
            until = time.perf_counter() + WARM_SECONDS
            search.search(chunk(name))
            while time.perf_counter() < until:
                search.search(chunk(name))
            timed = 0.0
            while timed < TURN_SECONDS:
                evict()
                started = time.perf_counter()
                search.search(chunk(name))
                timed += time.perf_counter() - started
                done[name] += batch
            spent[name] += timed
    return {name: done[name] / spent[name] for name in names}


def timed_rate(work, seconds: float) -> float:  # type: ignore[no-untyped-def]
    """Calls of `work` per second."""
    work()
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        work()
        calls += 1
    return calls / (time.perf_counter() - started)


def fma_peak(width: int, seconds: float) -> float:
    """FMAs per second of one core at its best: an sgemm of a shape that stays in cache."""
    rng = np.random.default_rng(2)
    directions = rng.normal(size=(256, width)).astype(np.float32)
    block = rng.normal(size=(width, 512)).astype(np.float32)
    return 256 * width * 512 * timed_rate(lambda: directions @ block, seconds)


def measure(
    args: argparse.Namespace, by_name: dict[str, Candidate], rows: np.ndarray
) -> dict[tuple[str, int], list[float]]:
    """Every round's rate of every (candidate, batch)."""
    queries = {name: planned(candidate.search, rows) for name, candidate in by_name.items()}
    rounds: dict[tuple[str, int], list[float]] = {}
    evict = evictor(args.evict_mib)
    for _ in range(args.rounds):
        for batch in args.batch:
            rates = turns_per_second(by_name, queries, batch, args.seconds, evict)
            for name, rate in rates.items():
                rounds.setdefault((name, batch), []).append(rate)
    return rounds


def blas_description() -> str:
    """The BLAS libraries numpy and FAISS run on, with their kernels and thread counts."""
    from threadpoolctl import threadpool_info

    return ", ".join(
        f"{pool['internal_api']} {pool.get('architecture') or ''} x{pool['num_threads']}".strip()
        for pool in threadpool_info()
    )


def main() -> int:
    """Print queries/second for every batch size and candidate, and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=0.3, help="time per configuration")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 8, 16, 32, 64, 128, 256])
    parser.add_argument("--rounds", type=int, default=5, help="rounds, alternating the order")
    parser.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads (served: 1)")
    parser.add_argument("--blas-from", type=int, nargs="+", default=[BLAS_FROM],
                        help="FAISS by BLAS from this many directions (candidates)")  # fmt: skip
    parser.add_argument("--only", nargs="+", help="measure only these candidates (and served)")
    parser.add_argument("--evict-mib", type=int, default=0,
                        help="MiB written before every timed batch (past the last-level cache: "
                        "a table that does not fit in it)")  # fmt: skip
    parser.add_argument("--check", type=float, help="exit 1 if served < CHECK x the best")
    parser.add_argument("--without-avx512", action="store_true",
                        help="the compiled pass off, as on a CPU without AVX-512")  # fmt: skip
    args = parser.parse_args()
    if args.without_avx512:
        dots.AVAILABLE = dots.SELECTS = dots.RESCORES = False
    from service.engine.threads import limit_compute_threads

    limit_compute_threads(args.threads)
    table = load_huggingface(default_table().path)
    by_name = candidates(table, args.blas_from)
    served = served_name()
    if args.only:
        by_name = {name: c for name, c in by_name.items() if name in {*args.only, served}}
    rows = np.random.default_rng(0).integers(0, table.rows, size=20_000)
    print(f"command: python -m benchmarks.engine_throughput {' '.join(sys.argv[1:])}")
    print(f"machine: {machine()}")
    print(f"libraries: faiss {faiss.__version__} (SIMD {faiss.get_compile_options()}, "
          f"FAISS_OPT_LEVEL={os.environ.get('FAISS_OPT_LEVEL', '-')}); {blas_description()}; "
          f"compiled pass {'on (AVX-512)' if dots.AVAILABLE else 'off'}; "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(
        f"table: {table.rows} x {table.width}, {table.vectors.nbytes / 2**20:.1f} MiB of rows; "
        f"one core's FMA limit {fma_peak(table.width, 0.3) / 1e9:.1f} G/s; served: {served}"
    )
    rounds = measure(args, by_name, rows)
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return report(args, list(by_name), served, rounds)


def paired(rounds: dict[tuple[str, int], list[float]], mine: str, other: str, batch: int) -> float:
    """Median over the rounds of `mine` / `other`, each measured in the same round."""
    pairs = zip(rounds[mine, batch], rounds[other, batch], strict=True)
    return float(np.median([a / b for a, b in pairs]))


LIBRARY = ("blas", "faiss")


def report(args: argparse.Namespace, names: list[str], served: str, rounds: dict) -> int:  # type: ignore[type-arg]
    """The table of rates and ratios; 1 when --check fails at some batch size."""
    print(f"{'batch':>5} " + " ".join(f"{name:>14}" for name in names))
    for batch in args.batch:
        cells = " ".join(f"{np.median(rounds[name, batch]):>14,.0f}" for name in names)
        print(f"{batch:>5} {cells}")
    print(
        "ratios, each the median of the rounds' own: served / the best other candidate; "
        "the hand-written kernel / the best library candidate"
    )
    failed = []
    for batch in args.batch:
        medians = {name: float(np.median(rounds[name, batch])) for name in names}
        other = max((n for n in names if n != served), key=medians.__getitem__)
        ratio = paired(rounds, served, other, batch)
        line = f"{batch:>5} served ({served}) / {other}: {ratio:.2f}x"
        library = [n for n in names if n.startswith(LIBRARY)]
        if "compiled" in names and library:
            best = max(library, key=medians.__getitem__)
            line += f"; compiled / {best}: {paired(rounds, 'compiled', best, batch):.2f}x"
        print(line)
        if args.check is not None and ratio < args.check:
            failed.append(batch)
    print("every round (q/s): " + "; ".join(
        f"{name} b{batch}: " + "/".join(f"{v:,.0f}" for v in values)
        for (name, batch), values in rounds.items()))  # fmt: skip
    if failed:
        print(f"CHECK FAILED: served below {args.check}x the best candidate at batch {failed}")
        return 1
    if args.check is not None:
        print(f"check passed: served at or above {args.check}x the best candidate everywhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())

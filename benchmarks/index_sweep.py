"""Recall@10 against queries/s of each index kind on one table, side by side in one run.

    python -m benchmarks.index_sweep --table glove
    python -m benchmarks.index_sweep --table /var/tmp/bigtables/prepared --hnsw-ef 64 256

The table is GloVe 6B 50-d (`--table glove`, from the bench extra: benchmarks/glove_table.py)
or any table the service reads (a prepared folder of harness/synthetic_table.py's 3M x 300).
Every index is built by the service's own code (Indexing.build: a seeded training sample, rows
added in chunks, the recall truth of 200 held-out rows), with every core as `embedding-service
index build` does; then each search setting is measured with one compute thread, one query per
call (CosineSearch.search, the candidates rescored exactly as served): recall@10 over the
held-out token queries, and queries/s cycling through them. Memory is the index's own bytes
(`ApproximateIndex.nbytes`), as a share of the table's float32 rows. `--row-major` measures each
point again, in the same run, on a row-major copy of the rows: what the served column layout
costs the rescoring's gathers. `--batched-rescoring` measures each point with the served
rescoring and with the batched rescoring every query took before the single-query path
(rows.rescore_batch: the same answers), alternating in `--rounds` rounds, and prints the
medians and their ratio. `--per-call N` also measures each point with N
queries a call, as the server's batcher hands them to the search (the answers checked equal to
one query a call's). Prints a table and writes the points as JSON (and a plot with
matplotlib, the bench extra).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.big_tables_sweep import rate
from harness.machine import machine
from service.engine.indexes.building import Indexing
from service.engine.indexes.recall import Truth, measure_recall, queries_of
from service.engine.search import cosine
from service.engine.search.approximate import IndexParameters
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import SearchOptions
from service.engine.search.rescoring import rescore_batch
from service.engine.tables.table import EmbeddingTable
from service.engine.threads import limit_compute_threads


@dataclass(frozen=True)
class Build:
    """One index to build: its kind and build parameters."""

    kind: str
    parameters: dict[str, int]


def read(name: str) -> EmbeddingTable:
    """`glove`, or a path the service's loaders read."""
    if name == "glove":
        from benchmarks.glove_table import glove_table

        return glove_table()
    from service.engine.loaders import load_table

    return load_table(Path(name))


def builds(args: argparse.Namespace) -> list[tuple[Build, list[dict[str, int]]]]:
    """Each index to build, with the search settings to measure it at."""
    planned: list[tuple[Build, list[dict[str, int]]]] = []
    for nlist, pq_m in itertools.product(args.nlist, args.pq_m):
        searches = [{"nprobe": p, "k_factor": k, **margin} for p in args.nprobe
                    for k in args.k_factor for margin in margins(args) if p <= nlist]  # fmt: skip
        planned.append((Build("fastscan", {"nlist": nlist, "pq_m": pq_m}), searches))
    for kind, efforts in (("hnsw", args.hnsw_ef), ("hnswsq", args.hnswsq_ef)):
        if efforts:
            planned.append((Build(kind, {}), [{"ef_search": ef} for ef in efforts]))
    for nlist in args.ivf_nlist:
        planned.append((Build("ivf", {"nlist": nlist}), [{"nprobe": p, **margin}
                                                         for p in args.ivf_nprobe
                                                         for margin in margins(args)
                                                         if p <= nlist]))  # fmt: skip
    for nlist in args.ivfpq_nlist:
        planned.append((Build("ivfpq", {"nlist": nlist}), [{"nprobe": p, "k_factor": k, **margin}
                                                           for p in args.ivfpq_nprobe
                                                           for k in args.ivfpq_k_factor
                                                           for margin in margins(args)
                                                           if p <= nlist]))  # fmt: skip
    return planned


def margins(args: argparse.Namespace) -> list[dict[str, float]]:
    """The probe margins asked for (--probe-margin), or the index's own (an empty setting)."""
    return [{"probe_margin": margin} for margin in args.probe_margin] or [{}]


def measure(
    search: CosineSearch, truth: Truth, options: SearchOptions, seconds: float
) -> tuple[float, float]:
    """(recall@10, queries/s) of one setting, one query per call."""
    assert search.approximate is not None
    recall = measure_recall(search, search.approximate, truth, options).at_k
    queries = queries_of(search, truth.rows, options)
    per_second = rate(lambda i: len(search.search([queries[i % len(queries)]])), seconds)
    return recall, per_second


def per_call_rate(
    search: CosineSearch, truth: Truth, options: SearchOptions, seconds: float, size: int
) -> float:
    """Queries/s of the same setting with `size` queries a call (--per-call), as the server's
    batcher hands them over, one thread; the answers checked to be those of one query a call
    (FAISS and the rescoring answer each query on its own)."""
    queries = queries_of(search, truth.rows, options)
    cycle = queries * (1 + -(-size // len(queries)))  # a call's slice never runs off the end
    alone = [search.search([query])[0] for query in queries[:size]]
    together = search.search(cycle[:size])
    for one, other in zip(alone, together[: len(alone)], strict=True):
        assert one.ids.tolist() == other.ids.tolist()
        assert one.scores.tobytes() == other.scores.tobytes()

    def work(i: int) -> int:
        start = (i * size) % len(queries)
        return len(search.search(cycle[start : start + size]))

    return rate(work, seconds)


def row_major_rate(
    search: CosineSearch, truth: Truth, options: SearchOptions, seconds: float
) -> float:
    """Queries/s of the same setting with the rows swapped for a row-major copy (--row-major):
    what the column layout (tables/layout.py) costs the rescoring's row gathers. A benchmark
    A/B only: the service never holds this second copy."""
    table = search.table
    served = table.vectors
    object.__setattr__(table, "vectors", np.ascontiguousarray(served))
    try:
        return measure(search, truth, options, seconds)[1]
    finally:
        object.__setattr__(table, "vectors", served)


@contextmanager
def batched_rescoring() -> Iterator[None]:
    """Every search rescored by the batched path, as before the single-query path."""
    served = cosine.rescore
    cosine.rescore = rescore_batch
    try:
        yield
    finally:
        cosine.rescore = served


def paired_rates(
    search: CosineSearch,
    truth: Truth,
    options: SearchOptions,
    seconds: float,
    rounds: int,
    other: Callable[[], AbstractContextManager[None]] = batched_rescoring,
) -> tuple[float, float]:
    """Median queries/s of the served path and of `other` (--batched-rescoring),
    measured in alternating rounds, so a change of the machine's load hits both alike."""
    queries = queries_of(search, truth.rows, options)

    def one_rate() -> float:
        return rate(lambda i: len(search.search([queries[i % len(queries)]])), seconds / rounds)

    served, batched = [], []
    for _ in range(rounds):
        served.append(one_rate())
        with other():
            batched.append(one_rate())
    return float(np.median(served)), float(np.median(batched))


def run_build(
    table: EmbeddingTable,
    build: Build,
    searches: list[dict[str, int]],
    seconds: float,
    row_major: bool = False,
    rounds: int = 0,
    other: Callable[[], AbstractContextManager[None]] = batched_rescoring,
    per_call: int = 1,
) -> list[dict[str, Any]]:
    """Build one index (every core), then measure each search setting (one thread)."""
    import faiss

    faiss.omp_set_num_threads(os.cpu_count() or 1)
    wanted = IndexParameters(kind=build.kind, **build.parameters)  # type: ignore[arg-type]
    parameters = wanted.resolved(table.rows, table.width, table.source)
    indexing = Indexing(CosineSearch(table), parameters)
    started = time.perf_counter()
    approximate = indexing.build()
    built = time.perf_counter() - started
    assert indexing.truth is not None
    limit_compute_threads(1)
    table_bytes = table.rows * table.width * 4
    points = []
    for search_options in searches:
        options = SearchOptions(**search_options)
        recall, per_second = measure(indexing.search, indexing.truth, options, seconds)
        batched = None
        if rounds:
            per_second, batched = paired_rates(
                indexing.search, indexing.truth, options, seconds, rounds, other
            )
        point = {"kind": build.kind, **parameters.described(), **search_options,
                 "recall_at_10": recall, "queries_per_second": per_second,
                 "row_major_queries_per_second": None if not row_major else row_major_rate(
                     indexing.search, indexing.truth, options, seconds),
                 "batched_rescoring_queries_per_second": batched,
                 "per_call": per_call,
                 "per_call_queries_per_second": None if per_call == 1 else per_call_rate(
                     indexing.search, indexing.truth, options, seconds, per_call),
                 "index_bytes": approximate.nbytes,
                 "memory_share": approximate.nbytes / table_bytes,
                 "build_seconds": approximate.build_seconds,
                 "with_truth_seconds": built}  # fmt: skip
        say(row(point))
        points.append(point)
    return points


def exact_rate(table: EmbeddingTable, seconds: float) -> float:
    """Queries/s of the exhaustive path, one query per call, one thread."""
    from service.engine.indexes.recall import held_out_rows

    limit_compute_threads(1)
    search = CosineSearch(table)
    queries = queries_of(search, held_out_rows(search.store), SearchOptions(exact=True))
    return rate(lambda i: len(search.search([queries[i % len(queries)]])), seconds)


def against_gensim(table: EmbeddingTable) -> str:
    """The exact path's top 10 against gensim's most_similar on the same rows, for the held-out
    token queries (gensim is in the test extra)."""
    from gensim.models import KeyedVectors

    from service.engine.indexes.recall import held_out_rows

    search = CosineSearch(table)
    rows = held_out_rows(search.store)
    answers = search.search(queries_of(search, rows, SearchOptions(exact=True)))
    vectors = KeyedVectors(table.width)
    vectors.add_vectors(list(table.tokens), np.asarray(table.vectors))
    same, gap = 0, 0.0
    for row, answer in zip(rows.tolist(), answers, strict=True):
        theirs = vectors.most_similar(positive=[table.tokens[row]], topn=10)
        same += [vectors.get_index(word) for word, _ in theirs] == answer.ids.tolist()
        gap = max(gap, float(np.max(np.abs(np.array([v for _, v in theirs]) - answer.scores))))
    return (f"exact path against gensim most_similar on the same rows: {same}/{rows.size} "
            f"held-out queries with the same top 10 in the same order, largest score gap "
            f"{gap:.1e} (gensim scores in float32)")  # fmt: skip


COLUMNS = ("kind", "build", "search", "recall@10", "q/s", "q/s row-major",
           "q/s batched rescoring", "q/s, many a call", "index MiB", "of table",
           "build s")  # fmt: skip


def row_major_cell(point: dict[str, Any]) -> str:
    """The row-major A/B's q/s, or a dash when it was not measured."""
    value = point.get("row_major_queries_per_second")
    return "-" if value is None else f"{value:,.0f}"


def per_call_cell(point: dict[str, Any]) -> str:
    """The q/s with --per-call queries a call, or a dash when it was not measured."""
    value = point.get("per_call_queries_per_second")
    return "-" if value is None else f"{value:,.0f} ({point['per_call']} a call)"


def batched_cell(point: dict[str, Any]) -> str:
    """The batched rescoring's q/s and the served path's speed-up over it, or a dash."""
    value = point.get("batched_rescoring_queries_per_second")
    if value is None:
        return "-"
    return f"{value:,.0f} (served {point['queries_per_second'] / value:.2f}x)"


SEARCH_KEYS = {"fastscan": ("nprobe", "k_factor", "probe_margin"),
               "ivfpq": ("nprobe", "k_factor", "probe_margin"),
               "ivf": ("nprobe", "probe_margin"), "hnsw": ("ef_search",),
               "hnswsq": ("ef_search",)}  # fmt: skip
BUILD_KEYS = {
    "fastscan": ("nlist", "pq_m"),
    "ivf": ("nlist",),
    "ivfpq": ("nlist", "pq_m", "pq_bits"),
    "hnsw": ("hnsw_m", "ef_construction"),
    "hnswsq": ("hnsw_m", "ef_construction"),
}


def row(point: dict[str, Any]) -> str:
    """One point as a markdown table row."""
    kind = point["kind"]
    built = " ".join(f"{key}={point[key]}" for key in BUILD_KEYS[kind])
    searched = " ".join(f"{key}={point[key]}" for key in SEARCH_KEYS[kind])
    cells = (kind, built, searched, f"{point['recall_at_10']:.3f}",
             f"{point['queries_per_second']:,.0f}", row_major_cell(point), batched_cell(point),
             per_call_cell(point),
             f"{point['index_bytes'] / 2**20:,.1f}",
             f"{point['memory_share']:.1%}", f"{point['build_seconds']:.1f}")  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def say(line: str) -> None:
    """Print a line now (a sweep is long)."""
    print(line, flush=True)


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", default="glove", help="glove, or a table path")
    parser.add_argument("--nlist", type=int, nargs="*", default=[512, 1024, 2048])
    parser.add_argument("--pq-m", type=int, nargs="*", default=[25, 50])
    parser.add_argument("--nprobe", type=int, nargs="*", default=[16, 32, 48, 64, 96])
    parser.add_argument("--k-factor", type=int, nargs="*", default=[2, 4, 8])
    parser.add_argument("--hnsw-ef", type=int, nargs="*", default=[32, 64, 128, 256])
    parser.add_argument("--hnswsq-ef", type=int, nargs="*", default=[32, 64, 128, 256])
    parser.add_argument("--ivf-nlist", type=int, nargs="*", default=[1024])
    parser.add_argument("--ivf-nprobe", type=int, nargs="*", default=[16, 32, 64])
    parser.add_argument(
        "--ivfpq-nlist",
        type=int,
        nargs="*",
        default=[1024],
        help="IVF-PQ indexes (8-bit codes, pq_m at its default); none: skip",
    )
    parser.add_argument("--ivfpq-nprobe", type=int, nargs="*", default=[16, 32, 64])
    parser.add_argument("--ivfpq-k-factor", type=int, nargs="*", default=[4])
    parser.add_argument("--probe-margin", type=float, nargs="*", default=[],
                        help="IVF kinds: probe margins (default the index's)")  # fmt: skip
    parser.add_argument("--seconds", type=float, default=1.5, help="per q/s figure")
    parser.add_argument("--gensim", action="store_true", help="check the exact path on gensim")
    parser.add_argument("--row-major", action="store_true",
                        help="also measure each point on a row-major copy of the rows")  # fmt: skip
    parser.add_argument(
        "--batched-rescoring",
        action="store_true",
        help="also measure each point with the batched rescoring, alternating",
    )
    parser.add_argument("--per-call", type=int, default=1,
                        help="also measure each point with this many queries a call")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=5,
                        help="alternating rounds of --batched-rescoring (medians)")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="the points as JSON")
    parser.add_argument("--plot", type=Path, default=None, help="recall against q/s, a PNG")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Build and measure every index asked for; print the tables."""
    args = parse(argv)
    say(f"command: python -m benchmarks.index_sweep {shlex.join(sys.argv[1:])}")
    say(f"machine: {machine()}, load average {os.getloadavg()[0]:.1f}")
    table = read(args.table)
    say(f"table: {args.table} ({table.rows:,} x {table.width}, "
        f"{table.rows * table.width * 4 / 2**20:,.0f} MiB of float32 rows)")  # fmt: skip
    exact = exact_rate(table, args.seconds)
    say(f"exact path, one query per call, 1 thread: {exact:,.1f} q/s (recall 1 by definition)")
    if args.gensim:
        say(against_gensim(table))
    say("\n| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    points: list[dict[str, Any]] = []
    for build, searches in builds(args):
        rounds = args.rounds if args.batched_rescoring else 0
        points += run_build(table, build, searches, args.seconds, args.row_major, rounds,
                            batched_rescoring, args.per_call)  # fmt: skip
    say(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    if args.out is not None:
        args.out.write_text(json.dumps({"exact_qps": exact, "points": points}, indent=1))
    if args.plot is not None:
        from benchmarks.index_plot import plot

        plot(points, exact, args.plot, f"{args.table} ({table.rows:,} x {table.width})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

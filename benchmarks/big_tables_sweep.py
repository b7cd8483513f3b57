"""In-process phases of benchmarks/big_tables.py: bandwidth, index builds, recall against q/s.

Everything runs through the service's own code (load_table of the prepared folder,
CosineSearch.search, Indexing.build, the recall truth saved with each index), BLAS and
OpenMP held to one thread as served, except the builds, which use every core as
`embedding-service index build` does.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.timing import run_times
from service.engine.indexes.building import Indexing
from service.engine.indexes.files import load_index, save_index
from service.engine.indexes.recall import Truth, held_out_rows, measure_recall, queries_of
from service.engine.loaders import load_table
from service.engine.search.approximate import IndexParameters
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import SearchOptions
from service.engine.tables.prepared import fingerprint
from service.engine.threads import limit_compute_threads

Say = Callable[[str], None]
HNSW_EF = (16, 32, 64, 128, 256, 512)
# The default bounds' worst cases: max_directions, max_k, max_exclude, max_ef_search, and
# max_results (32,768) / max_k queries of k = 1000 in one request.
WORST_DIRECTIONS, WORST_K, WORST_EXCLUDE, WORST_EF, WORST_BATCH = 256, 1000, 1000, 1024, 32
IVF_NPROBE = (1, 4, 16, 64, 128, 256)
BATCHES = (1, 32)


def best_seconds(work: Callable[[], object], rounds: int = 3) -> float:
    """The fastest of `rounds` runs of `work`."""
    return min(run_times(work, rounds))


def rate(work: Callable[[int], int], seconds: float) -> float:
    """Items per second of `work(i)` (which does some items and says how many), run for
    `seconds` and at least 3 times."""
    done, runs, started = 0, 0, time.perf_counter()
    while runs < 3 or time.perf_counter() - started < seconds:
        done += work(runs)
        runs += 1
    return done / (time.perf_counter() - started)


def bandwidth_phase(
    prepared: Path, seconds: float, results: dict, say: Say, phase: Callable[[str], None]
) -> None:
    """The exact path's passes over the rows against plain numpy reads of the same rows."""
    phase("3. exact path against a plain numpy read of the same rows (1 thread, warm)")
    limit_compute_threads(1)
    index = CosineSearch(load_table(prepared))
    rows = index.table.vectors
    gigabytes = rows.nbytes / 1e9
    reads = {
        "int32 max over the rows' bits": lambda: rows.view(np.int32).max(),
        "float32 sum of the rows": lambda: rows.sum(axis=0, dtype=np.float32),
    }
    read_rates = {name: gigabytes / best_seconds(read) for name, read in reads.items()}
    bound = max(read_rates.values())
    for name, value in read_rates.items():
        say(f"plain read, {name}: {value:.1f} GB/s")
    queries = queries_of(index, held_out_rows(index.store, 256, seed=5), SearchOptions(exact=True))
    passes = {}
    for batch in (1, 8, 32):
        per_second = rate(lambda i, b=batch: len(index.search(_cycle(queries, i, b))), seconds)
        gb_per_second = gigabytes * per_second / batch
        passes[batch] = {"queries_per_second": per_second, "gb_per_second": gb_per_second,
                         "share_of_bound": gb_per_second / bound}  # fmt: skip
        say(f"exact path, batches of {batch}: {per_second:,.1f} q/s, one pass over "
            f"{gigabytes:.2f} GB per batch = {gb_per_second:.1f} GB/s = "
            f"{gb_per_second / bound:.0%} of the read bound")  # fmt: skip
    # The worst exhaustive request the default bounds allow: max_directions (256) in one pass.
    worst = best_seconds(lambda: index.search(queries[:WORST_DIRECTIONS]), rounds=2)
    say(f"exact path, one request of {WORST_DIRECTIONS} directions (the default "
        f"max_directions): {worst:.2f} s")  # fmt: skip
    results["bandwidth"] = {"gigabytes": gigabytes, "reads": read_rates, "passes": passes,
                            "worst_request_seconds": worst}  # fmt: skip


def _cycle(items: list, i: int, batch: int) -> list:
    start = (i * batch) % max(1, len(items) - batch)
    return items[start : start + batch]


def build_phase(
    prepared: Path, folder: Path, results: dict, say: Say, phase: Callable[[str], None]
) -> None:
    """Build HNSW (saved as the prepared folder's index) and IVF, every core, as the CLI does."""
    import faiss

    from service.cli.progress import ProgressBar

    phase(f"4. index builds ({os.cpu_count()} threads)")
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    table = load_table(prepared)
    builds = {}
    for kind, out in (("hnsw", prepared / "index.faiss"), ("ivf", folder / "ivf.faiss")):
        parameters = IndexParameters(kind=kind).resolved(table.rows, table.width, prepared)  # type: ignore[arg-type]
        indexing = Indexing(CosineSearch(table), parameters)
        started = time.perf_counter()
        approximate = indexing.build(ProgressBar(f"building {kind}", table.rows).update)
        total = time.perf_counter() - started
        assert indexing.truth is not None and indexing.recall is not None
        save_index(out, approximate, fingerprint(table), indexing.truth, indexing.recall)
        builds[kind] = {
            "parameters": parameters.described(),
            "build_seconds": approximate.build_seconds,
            "with_recall_truth_seconds": total,
            "bytes": approximate.nbytes,
            "file_bytes": out.stat().st_size,
            "recall_at_10": indexing.recall.at_k,
        }
        say(f"{kind} {parameters.described()}: built in {approximate.build_seconds:.1f} s "
            f"({total:.1f} s with the exact recall truth), {approximate.nbytes / 2**20:,.0f} MiB "
            f"in memory, file {out.stat().st_size / 2**20:,.0f} MiB, recall@10 "
            f"{indexing.recall.at_k:.3f} at its defaults")  # fmt: skip
        del approximate, indexing
    results["builds"] = builds
    limit_compute_threads(1)


def sweep_phase(
    prepared: Path, folder: Path, seconds: float, results: dict, say: Say,
    phase: Callable[[str], None],
) -> None:  # fmt: skip
    """Recall@10 and q/s (batches of 1 and 32) for each effort setting of each index."""
    phase("4b. recall@10 against queries/s in-process (1 thread, 200 held-out token queries)")
    limit_compute_threads(1)
    table = load_table(prepared)
    index = CosineSearch(table)
    sweeps: dict[str, list[dict[str, Any]]] = {}
    for kind, path, option, values in (
        ("hnsw", prepared / "index.faiss", "ef_search", HNSW_EF),
        ("ivf", folder / "ivf.faiss", "nprobe", IVF_NPROBE),
    ):
        approximate, truth = load_index(
            path, IndexParameters(), fingerprint(table), table.rows, table.width
        )
        assert truth is not None
        index.approximate = approximate
        limit = approximate.parameters.nlist if kind == "ivf" else max(values)
        sweeps[kind] = [_point(index, truth, kind, option, v, seconds, say) for v in values
                        if v <= limit]  # fmt: skip
        if kind == "hnsw":
            results["hnsw_worst"] = _worst_hnsw(index, truth, say)
    index.approximate = None
    results["sweeps"] = sweeps


def _worst_hnsw(index: CosineSearch, truth: Truth, say: Say) -> dict[str, float]:
    """Seconds of the worst HNSW request the default bounds allow: k = max_k with max_exclude
    exclusions at max_ef_search, alone and WORST_BATCH of them in one request."""
    rng = np.random.default_rng(3)
    options = SearchOptions(ef_search=WORST_EF)
    queries = []
    for query in queries_of(index, truth.rows[:WORST_BATCH], options):
        others = rng.choice(index.table.rows, size=WORST_EXCLUDE, replace=False)
        exclude = query.exclude | frozenset(others.tolist())
        queries.append(replace(query, k=WORST_K, exclude=exclude))
    one = best_seconds(lambda: index.search(queries[:1]))
    batch = best_seconds(lambda: index.search(queries), rounds=2)
    worst = f"k={WORST_K}, {WORST_EXCLUDE} exclusions, ef_search={WORST_EF}"
    say(
        f"hnsw worst case ({worst}): {one * 1000:.0f} ms for one query, "
        f"{batch:.2f} s for {len(queries)} in one request"
    )
    return {"one_query_seconds": one, "batch_seconds": batch, "batch": len(queries)}


def _point(
    index: CosineSearch, truth: Truth, kind: str, option: str, value: int, seconds: float,
    say: Say,
) -> dict[str, Any]:  # fmt: skip
    options = SearchOptions(**{option: value})
    assert index.approximate is not None
    recall = measure_recall(index, index.approximate, truth, options).at_k
    queries = queries_of(index, truth.rows, options)
    point: dict[str, Any] = {option: value, "recall_at_10": recall}
    for batch in BATCHES:
        point[f"qps_batch_{batch}"] = rate(
            lambda i, b=batch: len(index.search(_cycle(queries, i, b))), seconds / 2
        )
    rates = ", ".join(f"{point[f'qps_batch_{b}']:,.0f} q/s in batches of {b}" for b in BATCHES)
    say(f"{kind} {option}={value}: recall@10 {recall:.3f}, {rates}")
    return point


def plot(results: dict, path: Path, title: str) -> bool:
    """Recall@10 against queries/s: in-process sweeps and the HTTP points (False without
    matplotlib, the `bench` extra)."""
    try:
        import matplotlib
    except ImportError:
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7.5, 4.8))
    for kind, points in results.get("sweeps", {}).items():
        axis.plot([p["qps_batch_32"] for p in points], [p["recall_at_10"] for p in points],
                  "o-", label=f"{kind}, in-process, batches of 32")  # fmt: skip
    http = results.get("http", {}).get("sweep", [])
    if http:
        axis.plot([p["requests_per_second"] for p in http], [p["recall_at_10"] for p in http],
                  "s--", label="hnsw over HTTP, 32 connections, cache off")  # fmt: skip
    exact = results.get("bandwidth", {}).get("passes", {}).get(32)
    if exact:
        axis.axvline(exact["queries_per_second"], color="grey", linestyle=":",
                     label="exact path, batches of 32")  # fmt: skip
    from benchmarks.index_plot import finish

    finish(figure, axis, "queries (or requests) per second, 1 compute thread, 2 shared cores",
           f"Synthetic clustered table {title}: recall against throughput", path)  # fmt: skip
    return True

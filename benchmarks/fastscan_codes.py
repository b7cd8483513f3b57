"""Other codes for the same IVF lists, side by side in one run: what else FAISS offers for the
scan that bounds a fast-scan index (BENCHMARKS.md, "Probe margin").

    python -m benchmarks.fastscan_codes /var/tmp/fs3m/prepared-rows --settings 64:16 96:16

The prepared folder's saved fast-scan index (the served one: PQ 4-bit codes in blocks of 32
rows) is measured beside indexes built here over the same coarse lists (its centroids, so
every variant scans exactly the same lists for a query) with other codes:

- `pq-bbs64`: the same PQ 4-bit codes packed in blocks of 64 rows (FAISS's `bbs`), trained
  again on the sample below;
- `rabitq1` / `rabitq3`: FAISS's RaBitQ fast-scan codes (`IndexIVFRaBitQFastScan`) with 1 bit
  a dimension (a third of the bytes), and with 3 (FAISS's multi-bit RaBitQ: the sign bit in
  the fast-scan blocks, 2 more bits a dimension beside them).

Codes are trained on a seeded sample of `--train` unit rows (none of the held-out rows) and
every row is added, in chunks. For each `nprobe:k_factor` setting and `--margin` (the
service's probe_margin rule, applied here as the service applies it), on the held-out rows of
the saved index's recall truth (its sidecar, index.json): recall@10 after the exact rescoring
of the k x k_factor candidates (float64, as served), FAISS's scan alone in microseconds a query
(one thread, one query per call, the same lists for every variant; the variants timed in
alternating `--rounds`, the median printed with each round's), and the codes the lists hold.
`--heavy` splits the queries by the codes they scan: those above the given count (the rows of
the largest clusters, which sit in the largest lists) and the rest, with the heavy queries'
share of all the codes scanned.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from benchmarks.big_tables_sweep import rate

K = 10
CHUNK = 200_000
KINDS = ["pq-bbs64", *(f"rabitq{bits}" for bits in range(1, 5))]


@dataclass(frozen=True)
class Rows:
    """The prepared folder's rows (memory-mapped), their norms and the recall truth."""

    vectors: np.ndarray
    norms: np.ndarray
    queries: np.ndarray  # held-out rows
    truth: np.ndarray  # (queries, K) their exact neighbours

    def unit(self, ids: np.ndarray) -> np.ndarray:
        """Rows `ids` (sorted) as unit float32 vectors (zero rows stay zero)."""
        norms = self.norms[ids]
        scales = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        return np.asarray(self.vectors[ids] * scales[:, None], dtype=np.float32)


def read_rows(prepared: Path) -> Rows:
    """The folder's rows and the held-out truth its index was measured with."""
    facts = json.loads((prepared / "index.json").read_text(encoding="utf-8"))
    queries = np.asarray(facts["truth_rows"], dtype=np.int64)
    truth = np.asarray(facts["truth"], dtype=np.int64).reshape(len(queries), -1)[:, :K]
    return Rows(np.load(prepared / "vectors.npy", mmap_mode="r"),
                np.load(prepared / "norms.npy"), queries, truth)  # fmt: skip


def build(kind: str, centroids: np.ndarray, pq_m: int, rows: Rows, train: int) -> tuple[Any, Any]:
    """An index of `kind` over the lists of `centroids` (PQ: `pq_m` sub-quantizers, the served
    index's); (index, its quantizer: kept alive)."""
    nlist, width = centroids.shape
    quantizer = faiss.IndexFlatIP(width)
    quantizer.add(centroids)
    metric = faiss.METRIC_INNER_PRODUCT
    index: Any
    if kind == "pq-bbs64":
        index = faiss.IndexIVFPQFastScan(quantizer, width, nlist, pq_m, 4, metric, 64)
    else:
        bits = int(kind.removeprefix("rabitq"))
        index = faiss.IndexIVFRaBitQFastScan(quantizer, width, nlist, metric, 32, True, bits)
    total = len(rows.vectors)
    pool = np.setdiff1d(np.arange(total), rows.queries)
    sample = np.sort(np.random.default_rng(0).choice(pool, min(train, pool.size), replace=False))
    index.train(rows.unit(sample))  # the lists are the centroids': only the codes train
    for start in range(0, total, CHUNK):
        index.add(rows.unit(np.arange(start, min(start + CHUNK, total))))
    return index, quantizer


def lists_within(ivf: Any, queries: np.ndarray, nprobe: int, margin: float) -> tuple[Any, Any]:
    """The service's rule: the nprobe nearest lists, less those more than `margin` below the
    nearest's centroid cosine (-1: skipped)."""
    scores, lists = ivf.quantizer.search(queries, nprobe)
    lists[scores < scores[:, :1] - np.float32(margin)] = -1
    return scores, lists


def recall_of(rows: Rows, labels: np.ndarray, query: int, direction: np.ndarray) -> float:
    """recall@10 of one query's candidates rescored exactly (itself excluded)."""
    ids = np.unique(labels[(labels >= 0) & (labels != rows.queries[query])])
    keep = rows.norms[ids] > 0
    ids = ids[keep]
    scores = (np.asarray(rows.vectors[ids], dtype=np.float64) @ direction) / rows.norms[ids]
    best = ids[np.argsort(-scores, kind="stable")[:K]]
    return np.intersect1d(best, rows.truth[query]).size / K


@dataclass
class Point:
    """One variant at one setting: its recall per query, the codes each scans, its scan."""

    name: str
    setting: tuple[int, int]
    recalls: np.ndarray
    codes: np.ndarray
    scan: Callable[[int], int]
    micros: list[float] = field(default_factory=list)


def prepare(name: str, ivf: Any, rows: Rows, setting: tuple[int, int], margin: float) -> Point:
    """Recall of one variant at one setting, and its scan, one query per call, to time."""
    nprobe, k_factor = setting
    directions = rows.unit(rows.queries)
    ivf.nprobe = nprobe  # FAISS's Python wrapper checks the lists' shape against it
    scores, lists = lists_within(ivf, directions, nprobe, margin)
    sizes = np.array([ivf.invlists.list_size(i) for i in range(ivf.nlist)])
    codes = np.where(lists >= 0, sizes[np.maximum(lists, 0)], 0).sum(axis=1)
    depth = K * k_factor + 1
    recalls = np.empty(len(directions))
    for i in range(len(directions)):
        one = slice(i, i + 1)
        labels = ivf.search_preassigned(directions[one], depth, lists[one], scores[one])[1][0]
        recalls[i] = recall_of(rows, labels, i, directions[i].astype(np.float64))

    def scan(run: int) -> int:  # timed while ivf.nprobe is still this setting's (main's order)
        i = run % len(directions)
        ivf.search_preassigned(directions[i : i + 1], depth, lists[i : i + 1], scores[i : i + 1])
        return 1

    return Point(name, setting, recalls, codes, scan)


def report(point: Point, margin: float, heavy_codes: int) -> str:
    """One markdown row: recall (all, heavy, light), the heavy queries' share of the codes,
    the median scan time over the rounds (and each round's), the codes a query scans."""
    recalls, codes = point.recalls, point.codes
    heavy = codes > heavy_codes
    split = "-"
    if heavy.any() and (~heavy).any():
        share = codes[heavy].sum() / codes.sum()
        split = (f"{heavy.sum()}: {recalls[heavy].mean():.3f}, {(~heavy).sum()}: "
                 f"{recalls[~heavy].mean():.3f}; {share:.0%}")  # fmt: skip
    rounds = "/".join(f"{micros:,.0f}" for micros in point.micros)
    nprobe, k_factor = point.setting
    return (f"| {point.name} | {nprobe}, {k_factor}, {margin:g} | {recalls.mean():.3f} | "
            f"{split} | **{np.median(point.micros):,.0f}** ({rounds}) | {codes.mean():,.0f} | "
            f"{np.percentile(codes, 50):,.0f} / {np.percentile(codes, 90):,.0f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prepared", type=Path, help="a prepared folder with a fast-scan index")
    parser.add_argument("--settings", nargs="+", default=["64:16", "96:16"],
                        help="nprobe:k_factor")  # fmt: skip
    parser.add_argument("--margin", type=float, default=0.3)
    parser.add_argument("--variants", nargs="+", default=["pq-bbs64", "rabitq1", "rabitq3"],
                        choices=KINDS)  # fmt: skip
    parser.add_argument("--train", type=int, default=100_000)
    parser.add_argument("--heavy", type=int, default=100_000, help="codes of a heavy query")
    parser.add_argument("--seconds", type=float, default=3.0, help="per scan figure, in all")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print("command: python -m benchmarks.fastscan_codes " + shlex.join(sys.argv[1:]), flush=True)
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}", flush=True)
    rows = read_rows(args.prepared)
    served = faiss.read_index(str(args.prepared / "index.faiss"))
    ivf = faiss.extract_index_ivf(served)
    centroids = ivf.quantizer.reconstruct_n(0, ivf.nlist)
    print(f"{len(rows.vectors):,} x {rows.vectors.shape[1]} rows, {ivf.nlist} lists, "
          f"{len(rows.queries)} held-out queries; build on {faiss.omp_get_max_threads()} "
          "threads, search on 1", flush=True)  # fmt: skip
    variants: list[tuple[str, Any, Any]] = [("served (pq, bbs 32)", ivf, None)]
    for kind in args.variants:
        started = time.perf_counter()
        index, quantizer = build(kind, centroids, served.pq.M, rows, args.train)
        print(f"{kind}: {index.code_size} bytes a row of codes, built in "
              f"{time.perf_counter() - started:.0f} s", flush=True)  # fmt: skip
        variants.append((kind, index, quantizer))
    faiss.omp_set_num_threads(1)
    settings = [tuple(int(part) for part in text.split(":")) for text in args.settings]
    print(f"\n| codes | nprobe, k_factor, margin | recall@10 | heavy queries (> {args.heavy:,} "
          "codes): recall, light: recall; heavy share of the codes | scan us a query, median "
          f"({args.rounds} rounds) | codes a query | median / p90 |")  # fmt: skip
    print("|---|---|---:|---|---:|---:|---:|", flush=True)
    for setting in settings:
        points = [prepare(name, index, rows, setting, args.margin)  # type: ignore[arg-type]
                  for name, index, _ in variants]  # fmt: skip
        for _ in range(args.rounds):  # alternating, so the machine's load hits all alike
            for point in points:
                point.micros.append(1e6 / rate(point.scan, args.seconds / args.rounds))
        for point in points:
            print(report(point, args.margin, args.heavy), flush=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

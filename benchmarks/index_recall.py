"""Recall@10 of the default approximate indexes on a real table.

    .venv/bin/python -m benchmarks.index_recall [PATH] [--kinds hnsw ivf] [--probe-margin 2 0.3]

PATH defaults to the bundled MiniLM token table (30,522 x 384). Each index is built with the
parameters the service would choose for the table (`IndexParameters(kind).resolved`) and
measured as the service measures it: 200 seeded held-out rows queried as token neighbours,
against the exact path. The synthetic 3M x 300 table of `benchmarks.big_tables` is a hard case
(isotropic noise within clusters); this shows what the same defaults do on real vectors.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

from harness.machine import machine
from service.config import default_table
from service.engine.indexes.building import Indexing
from service.engine.indexes.recall import measure_recall
from service.engine.loaders import load_table
from service.engine.search.approximate import GRAPHS, IndexParameters
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import SearchOptions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=None)
    parser.add_argument("--kinds", nargs="+", default=["hnsw", "ivf"])
    parser.add_argument("--probe-margin", type=float, nargs="*", default=[],
                        help="IVF kinds: also the recall at these probe margins")  # fmt: skip
    args = parser.parse_args()
    path = args.path or default_table().path
    table = load_table(path)
    print("command: python -m benchmarks.index_recall " + shlex.join(sys.argv[1:]))
    print(f"machine: {machine()}, load average {os.getloadavg()[0]:.1f}")
    print(f"table: {path} ({table.rows:,} x {table.width})")
    for kind in args.kinds:
        parameters = IndexParameters(kind=kind).resolved(table.rows, table.width, str(path))
        indexing = Indexing(CosineSearch(table), parameters)
        started = time.perf_counter()
        indexing.build()
        built = time.perf_counter() - started
        facts = indexing.facts()
        shown = {k: v for k, v in facts["parameters"].items() if k != "kind"}
        print(
            f"{kind}: {shown}, built and measured in {built:.1f} s, "
            f"recall@10 {facts['recall_at_10']:.3f} over {facts['recall_queries']} held-out rows"
        )
        if kind in GRAPHS or indexing.approximate is None or indexing.truth is None:
            continue
        for margin in args.probe_margin:
            options = SearchOptions(probe_margin=margin)
            recall = measure_recall(indexing.search, indexing.approximate, indexing.truth, options)
            print(f"{kind}: probe_margin {margin:g}, recall@10 {recall.at_k:.3f}")


if __name__ == "__main__":
    main()

"""Recall@10 of the default approximate indexes on a real table.

    .venv/bin/python -m benchmarks.index_recall [PATH] [--kinds hnsw ivf]

PATH defaults to the bundled MiniLM token table (30,522 x 384). Each index is built with the
parameters the service would choose for the table (`IndexParameters(kind).resolved`) and
measured as the service measures it: 200 seeded held-out rows queried as token neighbours,
against the exact path. The synthetic 3M x 300 table of `benchmarks.big_tables` is a hard case
(isotropic noise within clusters); this shows what the same defaults do on real vectors.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from service.config import default_table
from service.engine.indexes.building import Indexing
from service.engine.loaders import load_table
from service.engine.search.approximate import IndexParameters
from service.engine.search.cosine import CosineSearch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=None)
    parser.add_argument("--kinds", nargs="+", default=["hnsw", "ivf"])
    args = parser.parse_args()
    path = args.path or default_table().path
    table = load_table(path)
    print(f"command: python -m benchmarks.index_recall {args.path or ''}".rstrip())
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
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


if __name__ == "__main__":
    main()

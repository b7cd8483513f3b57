"""FAISS's fast-scan search alone, before any rescoring: what bounds an IVF fast-scan index.

    python -m benchmarks.fastscan_alone /var/tmp/fs3m/prepared-rows --nprobe 64 --candidates 80

Reads the prepared folder's saved `index.faiss` and searches it with FAISS directly, one
thread, for 256 seeded rows of the table as unit directions, asking `--candidates` results a
query (the service asks k x k_factor: 80 for k 10 and k_factor 8), in batches of 1, 16 and 64
queries (the server's batches are 9-16 under load), with each of FAISS's search
implementations (`implem`, 0 = FAISS's own choice, which the service uses). Prints q/s per
batch size and implementation: the ceiling of the service's q/s with that index, whatever the
rescoring and HTTP cost after it.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import faiss
import numpy as np

from benchmarks.big_tables_sweep import rate

QUERIES = 256
BATCHES = (1, 16, 64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("prepared", type=Path, help="a prepared folder with a fast-scan index")
    parser.add_argument("--nprobe", type=int, default=64)
    parser.add_argument("--candidates", type=int, default=80)
    parser.add_argument("--implem", type=int, nargs="+", default=[0, 10, 11, 12, 13, 14, 15])
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    print("command: python -m benchmarks.fastscan_alone " + shlex.join(sys.argv[1:]), flush=True)
    faiss.omp_set_num_threads(1)
    index = faiss.read_index(str(args.prepared / "index.faiss"))
    vectors = np.load(args.prepared / "vectors.npy", mmap_mode="r")
    rows = np.sort(np.random.default_rng(0).choice(len(vectors), QUERIES, replace=False))
    queries = np.asarray(vectors[rows], dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    index.nprobe = args.nprobe
    print(f"{type(index).__name__}: {index.ntotal:,} rows, nlist {index.nlist}, nprobe "
          f"{args.nprobe}, {args.candidates} candidates a query, 1 thread")  # fmt: skip
    for implem in args.implem:
        index.implem = implem
        speeds = []
        for batch in BATCHES:

            def work(run: int, batch: int = batch) -> int:
                start = (run * batch) % QUERIES
                index.search(queries[start : start + batch], args.candidates)
                return len(queries[start : start + batch])

            speeds.append(f"batches of {batch}: {rate(work, args.seconds):,.0f} q/s")
        print(f"implem {implem}: " + ", ".join(speeds), flush=True)


if __name__ == "__main__":
    main()

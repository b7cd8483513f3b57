"""Big tables measured in one run, side by side (BENCHMARKS.md, "Tables of millions of rows").

    python -m benchmarks.big_tables --dir /var/tmp/bigtables --rows 3000000 --width 300

On harness/synthetic_table.py's clustered table (word2vec binary, written if missing):
1. loading the raw binary: load_table against gensim's load_word2vec_format;
2. the prepared form (embedding-service prepare) and gensim's own saved form, then start to
   ready from each, page cache warm: our open, a whole `serve` process to /readyz 200, and
   gensim's KeyedVectors.load(mmap="r");
3. the exact path's throughput against a plain numpy read of the same memory-mapped rows;
4. HNSW and IVF: build time and memory (the service's own build), recall@10 against q/s
   in-process (benchmarks/big_tables_sweep.py) and a plot;
5. over HTTP with the answer cache off, 1 and 2 workers: /healthz and neighbour throughput,
   recall@10 against req/s, resident and proportional memory of each worker
   (benchmarks/big_tables_http.py).
Each measurement that compares runs its sides in the same run; the machine's load is printed
with each phase. `--rows 20000 --width 32 --seconds 1` runs the same code in seconds (CI).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.big_tables_http import http_phase
from benchmarks.big_tables_sweep import plot, sweep_phase
from harness.machine import machine
from harness.synthetic_table import write_table

RESULTS: dict[str, Any] = {}


def say(line: str) -> None:
    """Print a result line now (the run is long)."""
    print(line, flush=True)


def phase(name: str) -> None:
    """A phase header with the machine's load at its start."""
    say(f"\n## {name} (load average {os.getloadavg()[0]:.1f})")


def warm(*paths: Path) -> None:
    """Read files once so that the timings that follow find them in the page cache."""
    for path in paths:
        files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.is_file())
        for file in files:
            with file.open("rb") as handle:
                while handle.read(1 << 24):
                    pass


def python(code: str, *args: str) -> list[float]:
    """Run `code` in a fresh interpreter; the floats it prints."""
    output = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    ).stdout
    return [float(value) for value in output.split()]


def raw_loads(source: Path, prepared: Path, saved: Path) -> None:
    """Load the binary with both loaders; write our prepared form and gensim's saved form."""
    from gensim.models import KeyedVectors

    from service.engine.loaders import load_table
    from service.engine.tables.prepared import write_prepared

    phase("1. loading the raw word2vec binary (page cache warm)")
    warm(source)
    gc.collect()
    started = time.perf_counter()
    table = load_table(source)
    ours = time.perf_counter() - started
    started = time.perf_counter()
    write_prepared(table, prepared)
    prepare_seconds = time.perf_counter() - started
    del table
    gc.collect()
    started = time.perf_counter()
    vectors = KeyedVectors.load_word2vec_format(str(source), binary=True)
    theirs = time.perf_counter() - started
    vectors.save(str(saved))
    del vectors
    gc.collect()
    RESULTS["raw_load"] = {"ours": ours, "gensim": theirs, "prepare_write": prepare_seconds}
    say(
        f"load_table {ours:.2f} s; gensim load_word2vec_format {theirs:.2f} s: {theirs / ours:.1f}x"
    )
    say(f"writing the prepared folder: {prepare_seconds:.2f} s")


OURS_OPEN = """
import sys, time
from service.engine.loaders import load_table
from service.engine.search.cosine import CosineSearch
started = time.perf_counter()
index = CosineSearch(load_table(sys.argv[1]))
print(time.perf_counter() - started)
"""
GENSIM_OPEN = """
import sys, time
from gensim.models import KeyedVectors
started = time.perf_counter()
vectors = KeyedVectors.load(sys.argv[1], mmap="r")
print(time.perf_counter() - started)
"""


def ready_times(prepared: Path, saved: Path, rounds: int) -> None:
    """Open times in fresh processes, alternating; a whole server to /readyz 200."""
    from benchmarks.big_tables_http import seconds_to_ready

    phase("2. start to ready, page cache warm (median of rounds, alternating)")
    warm(prepared, *saved.parent.glob(saved.name + "*"))
    times: dict[str, list[float]] = {"ours": [], "gensim": [], "serve": []}
    for _ in range(rounds):
        times["ours"] += python(OURS_OPEN, str(prepared))
        times["gensim"] += python(GENSIM_OPEN, str(saved))
        times["serve"].append(seconds_to_ready(prepared, index="exact"))
    report_ready(times, "ready")


READY_LABELS = {
    "ours": "open the prepared table and its exact index, in-process",
    "gensim": "gensim KeyedVectors.load(mmap='r'), in-process",
    "serve": "embedding-service serve, process start to /readyz 200 (exact)",
    "serve_indexed": "embedding-service serve with its saved HNSW index, start to /readyz 200",
}


def report_ready(times: dict[str, list[float]], key: str) -> None:
    """Medians of ready times, printed with every round."""
    medians = {name: sorted(values)[len(values) // 2] for name, values in times.items()}
    RESULTS[key] = {"rounds": times, "medians": medians}
    for name, median in medians.items():
        rounds = ", ".join(f"{t:.2f}" for t in times[name])
        say(f"{READY_LABELS[name]}: {median:.2f} s (rounds: {rounds})")


def indexed_ready_times(prepared: Path, rounds: int) -> None:
    """A whole server to /readyz 200 with the saved HNSW index read and checked."""
    from benchmarks.big_tables_http import seconds_to_ready

    phase("2b. start to ready with the HNSW index, page cache warm")
    warm(prepared)
    report_ready({"serve_indexed": [seconds_to_ready(prepared, None) for _ in range(rounds)]},
                 "ready_indexed")  # fmt: skip


def main() -> None:
    """Run every phase; print the figures and write them as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path("/var/tmp/bigtables"))
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--width", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=8.0, help="per throughput figure")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the ready times")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/big-tables.json"))
    parser.add_argument("--plot", type=Path, default=Path("benchmarks/recall.png"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    say(f"command: python -m benchmarks.big_tables {shlex.join(sys.argv[1:])}")
    say(f"machine: {machine()}, Python {platform.python_version()}")
    source = args.dir / f"synthetic-{args.rows}-{args.width}.bin"
    prepared, saved = args.dir / "prepared", args.dir / "gensim.kv"
    if not source.exists():
        write_table(source, args.rows, args.width, seed=0)
    raw_loads(source, prepared, saved)
    source.unlink()  # 3.6 GB at full size: out of the page cache and off the disk
    ready_times(prepared, saved, args.rounds)
    for file in saved.parent.glob(saved.name + "*"):
        file.unlink()
    from benchmarks.big_tables_sweep import bandwidth_phase, build_phase

    bandwidth_phase(prepared, args.seconds, RESULTS, say, phase)
    build_phase(prepared, args.dir, RESULTS, say, phase)
    indexed_ready_times(prepared, args.rounds)
    sweep_phase(prepared, args.dir, args.seconds, RESULTS, say, phase)
    http_phase(prepared, args.seconds, RESULTS, say, phase)
    plotted = plot(RESULTS, args.plot, f"{args.rows:,} x {args.width}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(RESULTS, indent=1))
    drawn = f" and {args.plot}" if plotted else " (no plot: matplotlib is not installed)"
    say(f"\nwrote {args.out}{drawn}; remove {args.dir} when done "
        f"({shutil.disk_usage(args.dir).free / 1e9:.0f} GB free there)")  # fmt: skip


if __name__ == "__main__":
    main()

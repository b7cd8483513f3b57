"""The demo training run and what /trajectory and /drift cost at their limits.

    .venv/bin/python -m benchmarks.training_report [--run DIR]

1. `embedding-service train-demo` with its defaults, timed as a subprocess (skipped with --run,
   which reads an existing run instead).
2. The run's figures, per checkpoint: mean norm, mean distance and cosine to the initial row,
   and Spearman's rho of log count with the distance from the initial row and with the norm
   (the /trajectory summary); then the last checkpoint by count band.
3. The operations at their limits through the app in-process (TestClient, lifespan, BLAS held
   to one thread as served): on the demo run, and on a checkpoint set the size of the default
   table (MiniLM's rows and a noisy copy) beside MiniLM itself. Each is timed on its first call
   (which builds what is kept per load: the summary, a checkpoint's view) and as the median of
   five more; the peak of Python's allocations (numpy's included) during one call, and the
   answer's size.
4. The drift pass alone on two 1,000,000 x 300 versions: time and the peak of temporaries.

Rerun under `flock /tmp/embedding-bench.lock` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient

from harness.machine import machine
from service.api.app import create_app
from service.config import Settings, TableSpec, default_table
from service.engine.analysis import drift
from service.engine.analysis.trajectory import row_norms, summarise
from service.engine.tables.checkpoints import Versions
from service.loading.tables import read_spec

BANDS = ((5, 10), (10, 30), (30, 100), (100, 1000), (1000, 10**9))


def train(out: Path) -> float:
    """Run train-demo with its defaults into `out`; the wall-clock seconds."""
    command = [sys.executable, "-m", "service", "train-demo", str(out)]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    print(f"train-demo (defaults): {seconds:.1f} s wall clock, as `{' '.join(command[1:])}`")
    report = json.loads((out / "training.json").read_text())
    print(
        f"  corpus {report['corpus_tokens']:,} tokens in {report['sentences']} pieces, "
        f"vocabulary {report['vocabulary']:,}, {len(report['checkpoints'])} checkpoints; "
        f"reading {report['read_seconds']:.1f} s, training {report['train_seconds']:.1f} s"
    )
    return seconds


def figures(run: Path) -> None:
    """The summary per checkpoint, then the last checkpoint by count band."""
    versions = Versions(read_spec(TableSpec(name="demo", checkpoints=run)), "demo")
    summary = summarise(versions)
    print(f"\nper checkpoint ({summary.counted_rows:,} rows with counts):")
    print(
        "  checkpoint          mean norm  distance  cosine  rho(count, distance)  rho(count, norm)"
    )
    for label, row in zip(versions.labels, summary.checkpoints, strict=True):
        rho = row.distance_by_count.r if row.distance_by_count else float("nan")
        print(
            f"  {label:<18} {row.mean_norm:9.3f} {row.mean_distance:9.3f} {row.mean_cosine:7.3f}"
            f"  {rho:20.3f}  {row.norm_by_count.r if row.norm_by_count else float('nan'):16.3f}"
        )
    counts = np.asarray(versions.table.metadata["count"])
    first, last = versions.vectors(0), versions.table.vectors
    epoch = versions.vectors(2) if versions.count > 2 else last
    cosine = _cosines(first, last)
    early = _cosines(first, epoch)
    print(f"\nby count band, at {versions.labels[-1]} (and cosine at {versions.labels[2]}):")
    for low, high in BANDS:
        rows = np.flatnonzero((counts >= low) & (counts < high))
        norms = row_norms(last[rows])
        distances = np.linalg.norm(last[rows].astype(float) - first[rows].astype(float), axis=1)
        print(
            f"  count {low:>5}-{high if high < 10**9 else '':<5} {rows.size:5} rows: norm "
            f"{norms.mean():.3f}, distance {distances.mean():.3f}, cosine to init "
            f"{cosine[rows].mean():.3f} ({early[rows].mean():.3f} after epoch 1)"
        )


def _cosines(first: np.ndarray, other: np.ndarray) -> np.ndarray:
    a, b = first.astype(np.float64), other.astype(np.float64)
    return (a * b).sum(axis=1) / (row_norms(first) * row_norms(other))


@contextmanager
def served(tables: list[TableSpec]) -> Iterator[TestClient]:
    settings = Settings(tables=tables, cache_bytes=0, diagnostics_at_load=False)
    with TestClient(create_app(settings)) as client:
        yield client


def measure(client: TestClient, what: str, path: str, body: dict) -> None:
    """First call, median of five more, peak allocations of one, answer size."""
    started = time.perf_counter()
    first = client.post(path, json=body)
    first_seconds = time.perf_counter() - started
    assert first.status_code == 200, first.text
    times = []
    for _ in range(5):
        started = time.perf_counter()
        client.post(path, json=body)
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    client.post(path, json=body)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"  {what}: first {first_seconds * 1000:.0f} ms, then {statistics.median(times) * 1000:.0f}"
        f" ms; peak allocations {peak / 1e6:.0f} MB; answer {len(first.content) / 1e6:.2f} MB"
    )


def costs_on_the_run(run: Path) -> None:
    settings = Settings()
    with served([TableSpec(name="demo", checkpoints=run)]) as client:
        count = len(client.get("/v1/tables/demo").json()["checkpoints"])
        points = settings.max_trajectory_values // count
        print(f"\non the demo run ({count} checkpoints), limits at their defaults:")
        body = {"points": points, "selection": "random"}
        measure(client, f"/trajectory, {points:,} random rows", "/v1/tables/demo/trajectory", body)
        measure(client, "/drift 0 -> last, limit 100", "/v1/tables/demo/drift", {})
        measure(client, "/drift at limits", "/v1/tables/demo/drift", drift_at_limits(client))


def drift_at_limits(client: TestClient, source: int | str = 0, table: str = "demo") -> dict:
    """limit max_drift_limit, max_drift_tokens tokens at k = max_results / (2 * tokens)."""
    settings = Settings()
    tokens = settings.max_drift_tokens
    k = min(settings.max_k, settings.max_results // (2 * tokens))
    answer = client.post(f"/v1/tables/{table}/projection", json={"points": 5000}).json()
    words = [p["token"] for p in answer["points"] if p["token"].isalpha()][1000 : 1000 + tokens]
    return {"from": source, "tokens": words, "k": k, "limit": settings.max_drift_limit}


def costs_at_minilms_size(folder: Path) -> None:
    minilm = default_table()
    table = read_spec(minilm)
    noise = np.random.default_rng(9).normal(scale=0.02, size=table.vectors.shape)
    vocabulary = "\n".join(table.tokens) + "\n"
    for name, rows in (("0-base", table.vectors), ("1-tuned", table.vectors + noise)):
        np.save(folder / f"{name}.npy", rows.astype(np.float32))
        (folder / f"{name}.vocab").write_text(vocabulary, encoding="utf-8")
    run = TableSpec(name="run", checkpoints=folder)
    with served([minilm, run]) as client:
        print(f"\na checkpoint set the size of MiniLM ({table.rows:,} x {table.width}, 2):")
        body = {"points": Settings().max_trajectory_points}
        measure(client, "/trajectory, 5,000 rows", "/v1/tables/run/trajectory", body)
        limits = drift_at_limits(client, 0, "run")
        measure(client, "/drift checkpoint 0 -> 1 at limits", "/v1/tables/run/drift", limits)
        limits = drift_at_limits(client, "minilm", "run")
        measure(client, "/drift minilm -> run at limits", "/v1/tables/run/drift", limits)


def drift_at_scale(rows: int = 1_000_000, width: int = 300) -> None:
    """The engine's pass over two versions of a big table (no server): time and temporaries."""
    rng = np.random.default_rng(0)
    before = rng.standard_normal((rows, width), dtype=np.float32)
    after = before + rng.standard_normal((rows, width), dtype=np.float32)
    every = np.arange(rows)
    tracemalloc.start()
    started = time.perf_counter()
    movement = drift.measure(before, after, every, every)
    measured = time.perf_counter() - started
    most, least = drift.most_moved(movement, 1000), drift.least_moved(movement, 1000)
    ranked = time.perf_counter() - started - measured
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"\nthe drift pass alone, two {rows:,} x {width} versions ({2 * before.nbytes / 1e9:.1f} "
        f"GB of float32): {measured:.1f} s, ranking 1,000 each way {ranked:.2f} s; peak "
        f"allocations {peak / 1e6:.0f} MB (the per-row results are {4 * 8 * rows / 1e6:.0f} MB)"
    )
    del most, least


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, help="an existing train-demo run (skip training)")
    args = parser.parse_args()
    print(f"command: python -m benchmarks.training_report {' '.join(sys.argv[1:])}".rstrip())
    print(f"machine: {machine()}")
    with tempfile.TemporaryDirectory() as folder:
        run = args.run
        if run is None:
            run = Path(folder) / "run"
            train(run)
        figures(run)
        costs_on_the_run(run)
        (Path(folder) / "minilm-run").mkdir()
        costs_at_minilms_size(Path(folder) / "minilm-run")
    drift_at_scale()


if __name__ == "__main__":
    main()

"""What the projection routes cost at their limits: the fit, the largest answer, /project.

    .venv/bin/python -m benchmarks.projection_cost

In-process (the operations' own answer-building functions) with BLAS held to one thread, as the
service runs it (compute_threads=1). The fit is timed on MiniLM and on two synthetic tables
whose sample is capped (projection_sample_rows=50,000): a 1,000,000 x 300 table fits from
its sample, not from every row. Rerun under `flock /tmp/embedding-bench.lock` on a shared
machine.
"""

from __future__ import annotations

import statistics
import tracemalloc
from collections.abc import Callable

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from harness.machine import machine
from harness.timing import run_times
from service.config import Settings, default_table
from service.engine.analysis.projection import Projector
from service.engine.loaders import load_huggingface
from service.engine.served import ServedTable
from service.engine.tables.table import EmbeddingTable
from service.loading.registry import Registry
from service.operations.context import Context
from service.operations.limits import Limits
from service.operations.projection import _project as project_body
from service.operations.projection import _projection as projection_body
from service.runtime.runtime import Runtime
from service.schemas.projection import ProjectionRequest, ProjectRequest


def median_seconds(work: Callable[[], object], runs: int = 5) -> float:
    """The median of `runs` runs of `work`."""
    return statistics.median(run_times(work, runs))


def fit_seconds(table: EmbeddingTable, runs: int = 3) -> float:
    """A fresh projector's first fit (norms of every row, then the sample's covariance)."""
    return median_seconds(lambda: Projector(table).basis(), runs)


def synthetic(rows: int, width: int) -> EmbeddingTable:
    vectors = np.random.default_rng(0).standard_normal((rows, width), dtype=np.float32)
    return EmbeddingTable([f"t{i}" for i in range(rows)], vectors)


def answers(served: ServedTable, settings: Settings) -> None:
    context = Context(served, Limits(settings), Runtime(settings))
    most = ProjectionRequest(points=settings.max_projection_points)
    body = projection_body(most, context)
    seconds = median_seconds(lambda: projection_body(most, context))
    tracemalloc.start()
    projection_body(most, context)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(
        f"/projection, {most.points:,} points: {seconds * 1000:.0f} ms, answer "
        f"{len(body) / 1e6:.2f} MB, peak Python memory {peak / 1e6:.0f} MB"
    )
    vectors = np.random.default_rng(1).standard_normal((settings.max_batch, 384)).tolist()
    placed = ProjectRequest(vectors=vectors)
    seconds = median_seconds(lambda: project_body(placed, context))
    print(f"/project, {settings.max_batch} raw vectors: {seconds * 1000:.1f} ms")


def main() -> None:
    print("command: python -m benchmarks.projection_cost")
    kernels = ", ".join(
        f"{pool['internal_api']} {pool.get('architecture')}" for pool in threadpool_info()
    )
    print(f"machine: {machine()}; BLAS ({kernels}) limited to 1 thread")
    settings = Settings()
    with threadpool_limits(1):
        minilm = load_huggingface(default_table().path)
        print(f"fit, MiniLM {minilm.rows:,} x {minilm.width}: {fit_seconds(minilm):.2f} s")
        for rows, width in ((100_000, 768), (1_000_000, 300)):
            seconds = fit_seconds(synthetic(rows, width), runs=1)
            print(f"fit, synthetic {rows:,} x {width} (50,000-row sample): {seconds:.2f} s")
        served = Registry().load("minilm", lambda: minilm)
        served.projector.basis()
        answers(served, settings)


if __name__ == "__main__":
    main()

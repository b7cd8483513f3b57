"""The compiled exact pass (search/dots.c): built and running here (with AVX-512), within the
float32 bound of numpy's float64 products, the same bits whatever else is in the batch, every
tail of rows and directions, and the same neighbours as the BLAS pass it stands in for."""

from __future__ import annotations

import platform
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from service.engine import threads
from service.engine.search import dots, kernels, products, rescoring, selection
from service.engine.search.cosine import CosineSearch
from service.engine.search.products import compiled_by_columns, compiled_serves, float32_dot_error
from service.engine.search.queries import NeighborQuery
from service.engine.tables.table import EmbeddingTable

WIDTH = 48


def by_columns(rows: int, width: int = WIDTH, seed: int = 0) -> np.ndarray:
    """(rows, width) float32 stored by columns, as the service holds a table."""
    rng = np.random.default_rng(seed)
    return np.asfortranarray(rng.normal(size=(rows, width)).astype(np.float32))


def test_the_compiled_pass_is_built_and_runs_where_the_cpu_has_avx512() -> None:
    # CI's machines have a C compiler (scripts/bootstrap installs gcc): a missing build would
    # otherwise fall back to BLAS unnoticed. The pass runs with AVX-512 only.
    assert dots.LIBRARY is not None
    cpuinfo = Path("/proc/cpuinfo")
    flags = cpuinfo.read_text().split() if cpuinfo.exists() else []
    if platform.machine() == "x86_64" and "avx512f" in flags:
        assert dots.AVAILABLE and dots.SIMD == 512
    else:  # no AVX-512, or built without its x86 kernels: the pass stays with BLAS
        assert not dots.AVAILABLE and not products.compiled_runs()


compiled = pytest.mark.skipif(not dots.AVAILABLE, reason="no compiled pass on this CPU")


@compiled
@pytest.mark.parametrize("count", [1, 2, 3, 5, 6, 7, 8, 9, 13, 16, 17, 33])
@pytest.mark.parametrize("start, stop", [(0, 1), (0, 15), (3, 20), (0, 31), (1, 34), (5, 1000)])
def test_products_are_within_the_float32_bound(count: int, start: int, stop: int) -> None:
    table = by_columns(1000)
    rows = table[start:stop]
    directions = np.random.default_rng(count).normal(size=(count, WIDTH)).astype(np.float32)
    scales = np.random.default_rng(stop).uniform(0.5, 2, size=stop - start).astype(np.float32)
    got = compiled_by_columns(directions, rows, scales)
    exact = directions.astype(np.float64) @ rows.T.astype(np.float64)
    magnitude = np.abs(directions).astype(np.float64) @ np.abs(rows.T).astype(np.float64)
    # The dot product's bound, then the scale's one rounding.
    bound = float32_dot_error(WIDTH) * magnitude * scales + 2.0**-24 * np.abs(exact * scales)
    assert got.shape == (count, stop - start) and got.dtype == np.float32
    assert np.all(np.abs(got - exact * scales) <= bound)
    plain = compiled_by_columns(directions, rows)
    np.testing.assert_array_equal(got, plain * scales)  # the scale is one multiplication after


@compiled
def test_a_direction_scores_the_same_whatever_its_batch() -> None:
    table = by_columns(2049, width=384)
    directions = np.random.default_rng(7).normal(size=(40, 384)).astype(np.float32)
    whole = compiled_by_columns(directions, table)
    # Strips up to 7 directions, tiles of up to 16 from 8 (37 as 13 + 12 + 12): one chain for
    # all.
    for batch in (slice(0, 1), slice(4, 9), slice(0, 2), slice(5, 21), slice(3, 40), slice(38, 40)):
        part = compiled_by_columns(directions[batch], table)
        assert part.tobytes() == whole[batch].tobytes()


@compiled
def test_it_serves_only_what_it_computes(monkeypatch: pytest.MonkeyPatch) -> None:
    table = by_columns(100)
    two = np.ones((2, WIDTH), dtype=np.float32)
    assert compiled_serves(two, table)
    assert not compiled_serves(two, np.ascontiguousarray(table))  # rows stored row after row
    assert not compiled_serves(two, table.astype(np.float64, order="F"))
    monkeypatch.setattr(threads, "compute_cap", 2)  # the pass is one thread: BLAS uses two
    assert not compiled_serves(two, table)
    monkeypatch.setattr(threads, "compute_cap", 1)
    assert compiled_serves(two, table)
    # Only the batch sizes where it was measured to win: BLAS takes one direction and many.
    widest = np.ones((products.COMPILED_UNTIL, WIDTH), dtype=np.float32)
    assert not compiled_serves(two[:1], table) and not compiled_serves(widest, table)
    assert compiled_serves(widest[: products.COMPILED_FROM], table)
    assert compiled_serves(widest[:-1], table)


@compiled
def test_neighbours_are_those_of_the_blas_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(30, 64))
    vectors = centres[rng.integers(0, 30, 5000)] + 0.2 * rng.normal(size=(5000, 64))
    vectors[[4, 40]] = 0  # padding rows: never neighbours
    table = EmbeddingTable([f"w{i}" for i in range(5000)], vectors.astype(np.float32))
    queries = [NeighborQuery(vector=rng.normal(size=64), k=10) for _ in range(12)]
    for row in (1, 9):
        queries.append(NeighborQuery(vector=vectors[row], row=row, k=25, exclude=frozenset({row})))
    search = CosineSearch(table)
    assert search.kernel.by_columns
    compiled = search.neighbors(queries)
    monkeypatch.setattr(kernels, "compiled_serves", lambda *_: False)
    blas = search.neighbors(queries)
    for mine, theirs in zip(compiled, blas, strict=True):
        assert mine.ids.tolist() == theirs.ids.tolist()
        assert mine.scores.tobytes() == theirs.scores.tobytes()


@compiled
def test_search_kernel_blas_runs_no_compiled_step(monkeypatch: pytest.MonkeyPatch) -> None:
    # `blas` is the library alone (the A/B's other side); `compiled` runs all three steps.
    vectors = by_columns(300)
    table = EmbeddingTable([f"w{i}" for i in range(300)], vectors)
    queries = [NeighborQuery(vector=vector, k=5) for vector in vectors[:8]]
    calls: list[str] = []
    # Each step patched where it is called: the kernel's pass, the selection, the rescoring.
    callers = {
        "compiled_by_columns": kernels,
        "compiled_candidates": selection,
        "compiled_dots": rescoring,
    }
    for name, caller in callers.items():
        step = getattr(caller, name)
        monkeypatch.setattr(caller, name, partial(counted, calls, name, step))
    library = CosineSearch(table, "blas").neighbors(queries)
    assert calls == []
    compiled = CosineSearch(table, "compiled").neighbors(queries)
    assert set(calls) == {"compiled_by_columns", "compiled_candidates", "compiled_dots"}
    for mine, theirs in zip(compiled, library, strict=True):
        assert mine.ids.tolist() == theirs.ids.tolist()
        assert mine.scores.tobytes() == theirs.scores.tobytes()


def counted(calls: list[str], name: str, step: Callable[..., Any], *args: Any) -> Any:
    """`step(*args)`, its name noted in `calls`."""
    calls.append(name)
    return step(*args)

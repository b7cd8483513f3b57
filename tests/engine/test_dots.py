"""The compiled exact pass (search/dots.c): built and running here, within the float32 bound of
numpy's float64 products, the same bits on AVX-512 and AVX2 and whatever else is in the batch,
every tail of rows and directions, and the same neighbours as the BLAS pass it stands in for."""

from __future__ import annotations

import platform

import numpy as np
import pytest

from service.engine import threads
from service.engine.search import dots
from service.engine.search import rows as search_rows
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import NeighborQuery
from service.engine.search.rows import compiled_by_columns, compiled_serves, float32_dot_error
from service.engine.tables.table import EmbeddingTable

WIDTH = 48
SIMDS = [simd for simd in (512, 256) if simd <= dots.SIMD]


def by_columns(rows: int, width: int = WIDTH, seed: int = 0) -> np.ndarray:
    """(rows, width) float32 stored by columns, as the service holds a table."""
    rng = np.random.default_rng(seed)
    return np.asfortranarray(rng.normal(size=(rows, width)).astype(np.float32))


def test_the_compiled_pass_is_built_and_runs_on_this_machine() -> None:
    # CI's machines have a C compiler (scripts/bootstrap installs gcc), and an x86-64 one has
    # AVX2 and FMA at least: a missing build would otherwise fall back to BLAS unnoticed.
    assert dots.LIBRARY is not None
    if platform.machine() == "x86_64":
        assert dots.AVAILABLE, f"simd {dots.SIMD}"
        assert dots.SIMD in (256, 512)
    else:  # built without its x86 kernels: the pass stays with BLAS
        assert not dots.AVAILABLE and not search_rows.compiled_runs()


compiled = pytest.mark.skipif(not dots.AVAILABLE, reason="no compiled pass on this CPU")


@compiled
@pytest.mark.parametrize("simd", SIMDS)
@pytest.mark.parametrize("count", [1, 2, 3, 5, 6, 7, 8, 9, 13, 16, 17, 33])
@pytest.mark.parametrize("start, stop", [(0, 1), (0, 15), (3, 20), (0, 31), (1, 34), (5, 1000)])
def test_products_are_within_the_float32_bound(simd: int, count: int, start: int, stop: int):
    table = by_columns(1000)
    rows = table[start:stop]
    directions = np.random.default_rng(count).normal(size=(count, WIDTH)).astype(np.float32)
    scales = np.random.default_rng(stop).uniform(0.5, 2, size=stop - start).astype(np.float32)
    got = compiled_by_columns(directions, rows, scales, simd=simd)
    exact = directions.astype(np.float64) @ rows.T.astype(np.float64)
    magnitude = np.abs(directions).astype(np.float64) @ np.abs(rows.T).astype(np.float64)
    # The dot product's bound, then the scale's one rounding.
    bound = float32_dot_error(WIDTH) * magnitude * scales + 2.0**-24 * np.abs(exact * scales)
    assert got.shape == (count, stop - start) and got.dtype == np.float32
    assert np.all(np.abs(got - exact * scales) <= bound)
    plain = compiled_by_columns(directions, rows, simd=simd)
    np.testing.assert_array_equal(got, plain * scales)  # the scale is one multiplication after


@compiled
def test_both_instruction_sets_give_the_same_bits() -> None:
    if dots.SIMD < 512:
        pytest.skip("this CPU runs AVX2 only: one instruction set to compare")
    table = by_columns(777, width=384)
    for count in (1, 3, 7, 8, 9, 16, 17, 24, 31, 64):
        directions = np.random.default_rng(count).normal(size=(count, 384)).astype(np.float32)
        wide = compiled_by_columns(directions, table, simd=512)
        narrow = compiled_by_columns(directions, table, simd=256)
        assert wide.tobytes() == narrow.tobytes()


@compiled
def test_a_direction_scores_the_same_whatever_its_batch() -> None:
    table = by_columns(2049, width=384)
    directions = np.random.default_rng(7).normal(size=(40, 384)).astype(np.float32)
    whole = compiled_by_columns(directions, table)
    # AVX-512: strips up to 7 directions, tiles of up to 16 from 8 (37 as 13 + 12 + 12); AVX2:
    # strips up to 8, its tiles from 9: one chain for all.
    for batch in (slice(0, 1), slice(4, 9), slice(0, 2), slice(5, 21), slice(3, 40), slice(38, 40)):
        part = compiled_by_columns(directions[batch], table)
        assert part.tobytes() == whole[batch].tobytes()


@compiled
def test_it_serves_only_what_it_computes(monkeypatch: pytest.MonkeyPatch) -> None:
    table = by_columns(100)
    two = np.ones((2, WIDTH), dtype=np.float32)
    assert compiled_serves(two, table)
    assert compiled_serves(two[:1], table)
    assert not compiled_serves(two, np.ascontiguousarray(table))  # rows stored row after row
    assert not compiled_serves(two, table.astype(np.float64, order="F"))
    monkeypatch.setattr(threads, "compute_cap", 2)  # the pass is one thread: BLAS uses two
    assert not compiled_serves(two, table)
    monkeypatch.setattr(threads, "compute_cap", 1)
    assert compiled_serves(two, table)
    # Without AVX-512, BLAS's matrix product takes the large batches.
    wide = np.ones((search_rows.NARROW_UNTIL, WIDTH), dtype=np.float32)
    monkeypatch.setattr(dots, "SIMD", 512)
    assert compiled_serves(wide, table)
    monkeypatch.setattr(dots, "SIMD", 256)
    assert not compiled_serves(wide, table)
    assert compiled_serves(wide[:-1], table)


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
    monkeypatch.setattr(search_rows, "compiled_serves", lambda *_: False)
    blas = search.neighbors(queries)
    for mine, theirs in zip(compiled, blas, strict=True):
        assert mine.ids.tolist() == theirs.ids.tolist()
        assert mine.scores.tobytes() == theirs.scores.tobytes()

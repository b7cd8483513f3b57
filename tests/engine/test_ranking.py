"""Every row's score and ranks against numpy's float64 arithmetic: the scores /neighbors and
/analogy report (to 1e-15), NaN for zero rows, any page of rows the same as the whole and either
layout the same, to the bit; ranks that count exactly the rows whose rescored score is strictly
above, with either kernel and either layout, and score each compared row to the bit as the
rescoring does."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import AnalogyQuery, NeighborQuery, Term
from service.engine.search.ranking import (
    exact_cosines,
    objectives,
    range_cosines,
    ranks,
    scores_of,
)
from service.engine.tables.table import EmbeddingTable
from tests.engine.test_rescoring import awkward_table

ROWS = 3000


def tiny_rows_table() -> EmbeddingTable:
    """awkward_table's rows (zero rows, duplicates, -0.0 scores) plus rows whose norms are so
    small that a float32 pass cannot score them (the kernel rescores them always)."""
    vectors = awkward_table(1).vectors.copy()
    rng = np.random.default_rng(3)
    vectors[[7, 1200]] = rng.normal(size=(2, vectors.shape[1])) * 1e-37
    return EmbeddingTable([f"w{i}" for i in range(ROWS)], vectors.astype(np.float32))


def row_major(table: EmbeddingTable) -> EmbeddingTable:
    """The same rows held row after row (the service holds them by columns)."""
    copy = EmbeddingTable(list(table.tokens), table.vectors)
    object.__setattr__(copy, "vectors", np.ascontiguousarray(table.vectors))
    return copy


TABLE = tiny_rows_table()
SEARCHES = {
    "blas, by columns": CosineSearch(TABLE),
    "blas, row-major": CosineSearch(row_major(TABLE)),
    "faiss": CosineSearch(TABLE, "faiss"),
}


def oracle(table: EmbeddingTable, direction: np.ndarray) -> np.ndarray:
    """numpy's float64 cosines of every row with a unit direction (NaN for zero rows)."""
    rows = table.vectors.astype(np.float64)
    norms = np.sqrt(np.sum(rows * rows, axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return rows @ direction / norms


def direction_of(search: CosineSearch, row: int) -> np.ndarray:
    return search.store.directions(np.asarray([row]))[0]


def test_cosines_are_float64_cosines_and_nan_for_zero_rows() -> None:
    search = SEARCHES["blas, by columns"]
    rng = np.random.default_rng(0)
    for row in [*rng.integers(0, ROWS, 20).tolist(), 10, 11]:
        if search.store.norms64[row] == 0:
            continue
        direction = direction_of(search, row)
        scores = range_cosines(search.store, direction[None, :], 0, ROWS)[0]
        np.testing.assert_allclose(scores, oracle(TABLE, direction), rtol=0, atol=1e-12)
        assert np.isnan(scores).tolist() == (search.store.norms64 == 0).tolist()
        assert scores[row] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("layout", ["blas, by columns", "blas, row-major"])
def test_cosines_are_the_neighbours_scores(layout: str) -> None:
    search = SEARCHES[layout]
    for row in [2, 10, 500, 2998]:
        [found] = search.neighbors([NeighborQuery(TABLE.vectors[row], 50, frozenset([row]),
                                                  row=row)])  # fmt: skip
        plan = search.plan(NeighborQuery(TABLE.vectors[row], 1, row=row))
        scores = scores_of(search.store, plan, 0, ROWS)
        np.testing.assert_allclose(scores[found.ids], found.scores, rtol=0, atol=1e-15)
        exact = exact_cosines(search.store, plan.vector, found.ids)  # type: ignore[union-attr]
        assert exact.tobytes() == found.scores.tobytes()  # the rescoring's own arithmetic


def test_neither_the_layout_nor_the_other_directions_change_a_bit() -> None:
    by_columns, row_major = SEARCHES["blas, by columns"], SEARCHES["blas, row-major"]
    directions = by_columns.store.directions(np.asarray([2, 10, 2998]))
    first = range_cosines(by_columns.store, directions, 0, ROWS)
    assert first.tobytes() == range_cosines(row_major.store, directions, 0, ROWS).tobytes()
    for i, direction in enumerate(directions):  # nor do the other directions
        alone = range_cosines(by_columns.store, direction[None, :], 0, ROWS)[0]
        assert alone.tobytes() == first[i].tobytes()


def test_the_objective_is_the_3cosmul_score() -> None:
    search = SEARCHES["blas, by columns"]
    terms = AnalogyQuery(
        positive=(Term(row=3), Term(row=40, weight=2.0)), negative=(Term(row=77),), k=30,
        method="mul",
    )  # fmt: skip
    [found] = search.analogies([terms])
    plan = search.plan_analogy(terms)
    scores = objectives(search.store, plan, 0, ROWS)  # type: ignore[arg-type]
    np.testing.assert_allclose(scores[found.ids], found.scores, rtol=1e-14)
    assert np.isnan(scores[search.store.zero]).all()
    # gensim's formula, in numpy: prod of shifted cosines over the negative's + 1e-6.
    shifted = [(1 + oracle(TABLE, direction_of(search, row))) / 2 for row in (3, 40, 77)]
    expected = shifted[0] * shifted[1] ** 2 / (shifted[2] + 1e-6)
    np.testing.assert_allclose(scores, expected, rtol=1e-12, equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(start=st.integers(0, ROWS), size=st.integers(0, ROWS), row=st.integers(0, ROWS - 1))
def test_a_page_is_the_same_rows_of_the_whole(start: int, size: int, row: int) -> None:
    search = SEARCHES["blas, by columns"]
    if search.store.norms64[row] == 0:
        return
    direction = direction_of(search, row)[None, :]
    whole = range_cosines(search.store, direction, 0, ROWS)[0]
    stop = min(start + size, ROWS)
    page = range_cosines(search.store, direction, start, stop)[0]
    assert page.tobytes() == whole[start:stop].tobytes()


@pytest.mark.parametrize("name", SEARCHES)
def test_ranks_count_exactly_the_rows_above(name: str) -> None:
    search = SEARCHES[name]
    rng = np.random.default_rng(1)
    for row in [*rng.integers(0, ROWS, 30).tolist(), 10, 7]:
        if search.store.norms64[row] == 0:
            continue
        direction = direction_of(search, row)
        scores = exact_cosines(search.store, direction, np.arange(ROWS))
        np.testing.assert_allclose(scores, oracle(TABLE, direction), rtol=0, atol=1e-12)
        # Far and near rows, a zero row, duplicates of row 10, tiny rows and the query itself.
        compared = np.asarray([*rng.integers(0, ROWS, 12).tolist(), 5, 11, 12, 7, 1200, row])
        found = ranks(search.store, search.kernel, direction, compared, row, listed=True)
        assert found.scores.tobytes() == scores[compared].tobytes()
        for i, other in enumerate(compared.tolist()):
            above = scores > scores[other]  # NaN compares False: zero rows never count
            above[row] = False
            assert found.closer[i] == np.count_nonzero(above), (row, other)
        first = scores > scores[compared[0]]
        first[row] = False
        assert found.listed is not None
        assert found.listed.tolist() == np.flatnonzero(first).tolist()


def test_a_zero_row_has_nothing_above_it_and_lists_nothing() -> None:
    search = SEARCHES["blas, by columns"]
    found = ranks(search.store, search.kernel, direction_of(search, 3), np.asarray([5]), 3, True)
    assert np.isnan(found.scores[0]) and found.closer.tolist() == [0]
    assert found.listed is not None and found.listed.size == 0


def test_a_vector_query_leaves_no_row_out() -> None:
    search = SEARCHES["blas, by columns"]
    direction = direction_of(search, 10)
    with_row = ranks(search.store, search.kernel, direction, np.asarray([300]), 10)
    without = ranks(search.store, search.kernel, direction, np.asarray([300]))
    # Rows 10, 11, 12 and 1500 are one row: with 10 left out, the other three still count.
    assert without.closer[0] == with_row.closer[0] + 1


@pytest.mark.parametrize("row", [2332, 3000, 17, 29000])
def test_the_rank_of_each_neighbour_is_its_place(minilm: EmbeddingTable, row: int) -> None:
    search = CosineSearch(minilm)
    [found] = search.neighbors([NeighborQuery(minilm.vectors[row], 200, frozenset([row]),
                                              row=row)])  # fmt: skip
    counted = ranks(search.store, search.kernel, direction_of(search, row), found.ids, row)
    places = [int(np.count_nonzero(found.scores > score)) for score in found.scores]
    assert counted.closer.tolist() == places
    assert counted.scores.tobytes() == found.scores.tobytes()

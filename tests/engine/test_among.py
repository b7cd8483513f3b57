"""Neighbours among a candidate set: the exact top k of exactly those rows, against a float64
oracle, on both kernels and on tables with an approximate index."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from service.engine.errors import UnknownId
from service.engine.indexes.building import Indexing
from service.engine.search.among import among_of
from service.engine.search.approximate import IndexParameters
from service.engine.search.cosine import CosineSearch, NeighborQuery
from service.engine.search.queries import Among, SearchOptions
from service.engine.tables.table import EmbeddingTable
from tests.engine.test_approximate import ROWS, WIDTH, clustered


def oracle(table: EmbeddingTable, row: int, among: np.ndarray, k: int) -> tuple[list, list]:
    """numpy in float64: the top k cosines of `row` with the set's rows that have a direction,
    the row itself left out, ties by row id."""
    vectors = table.vectors.astype(np.float64)
    norms = np.sqrt(np.sum(vectors * vectors, axis=1))
    ids = np.asarray([i for i in np.unique(among) if norms[i] > 0 and i != row], np.int64)
    scores = (vectors[ids] / norms[ids, None]) @ (vectors[row] / norms[row])
    order = np.lexsort((ids, -scores))[:k]
    return ids[order].tolist(), scores[order].tolist()


def query(search: CosineSearch, row: int, k: int, among: Among, **options: object) -> NeighborQuery:
    vector = search.table.vectors[row]
    return NeighborQuery(vector, k, frozenset({row}), row=row, among=among, **options)  # type: ignore[arg-type]


def assert_oracle(search: CosineSearch, rows: list[int], k: int, among: Among, **options: object):
    answers = search.neighbors([query(search, row, k, among, **options) for row in rows])
    for row, answer in zip(rows, answers, strict=True):
        ids, scores = oracle(search.table, row, among.rows, k)
        assert answer.ids.tolist() == ids
        np.testing.assert_allclose(answer.scores, scores, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kernel", ["blas", "faiss"])
def test_neighbours_among_a_set_equal_the_float64_oracle(minilm: EmbeddingTable, kernel) -> None:
    search = CosineSearch(minilm, kernel)
    rng = np.random.default_rng(11)
    among = among_of(minilm, rng.choice(minilm.rows, size=3000, replace=False))
    inside = rng.choice(among.rows, size=40, replace=False).tolist()
    outside = rng.choice(np.setdiff1d(np.arange(minilm.rows), among.rows), size=10).tolist()
    assert_oracle(search, inside + outside, 14, among)


def test_every_answer_lies_in_the_set_and_a_batch_equals_each_alone(minilm) -> None:
    search = CosineSearch(minilm)
    among = among_of(minilm, range(20_000, 25_000))
    queries = [query(search, row, 30, among) for row in range(20_000, 20_300)]
    together = search.neighbors(queries)
    for q, answer in zip(queries[::37], together[::37], strict=True):
        [alone] = search.neighbors([q])
        np.testing.assert_array_equal(alone.ids, answer.ids)
        np.testing.assert_array_equal(alone.scores, answer.scores)
    assert all(((a.ids >= 20_000) & (a.ids < 25_000)).all() and len(a.ids) == 30 for a in together)


def test_zero_rows_inputs_and_exclusions_are_never_neighbours() -> None:
    table = clustered(rows=400)  # row 7 is a zero row
    search = CosineSearch(table)
    among = among_of(table, [3, 7, 9, 9, 11, 12, 40])
    [answer] = search.neighbors([query(search, 3, 10, among)])
    assert sorted(answer.ids.tolist()) == [9, 11, 12, 40]
    excluding = replace(query(search, 3, 10, among), exclude=frozenset({3, 11}))
    [fewer] = search.neighbors([excluding])
    assert fewer.ids.tolist() == [i for i in answer.ids.tolist() if i != 11]
    [none] = search.neighbors([query(search, 3, 5, among_of(table, [3, 7]))])
    assert none.ids.size == 0


def test_ties_are_broken_by_row_id() -> None:
    vectors = np.random.default_rng(2).normal(size=(50, 6)).astype(np.float32)
    vectors[[10, 20, 30, 45]] = vectors[5] * np.float32(2)  # the same direction four times
    table = EmbeddingTable([f"t{i}" for i in range(50)], vectors)
    search = CosineSearch(table)
    among = among_of(table, [45, 30, 20, 10, 1, 2])
    [answer] = search.neighbors([query(search, 5, 4, among)])
    assert answer.ids.tolist() == [10, 20, 30, 45]
    assert_oracle(search, [5, 1, 2], 6, among)


def test_ids_outside_the_table_are_named() -> None:
    table = clustered(rows=100)
    with pytest.raises(UnknownId, match="100, -1"):
        among_of(table, [3, 100, -1])


@pytest.fixture(scope="module", params=["hnsw", "ivfpq"])
def indexed(request: pytest.FixtureRequest) -> Indexing:
    pq_m = 8 if request.param == "ivfpq" else 0
    parameters = IndexParameters(kind=request.param, pq_m=pq_m).resolved(ROWS, WIDTH, "test")
    indexing = Indexing(CosineSearch(clustered()), parameters)
    indexing.build()
    return indexing


def test_an_approximate_index_answers_a_set_exactly(indexed: Indexing) -> None:
    search = indexed.search
    assert search.approximate is not None
    among = among_of(search.table, np.arange(0, ROWS, 3))
    rows = list(range(1, 600, 7))  # row 7 has no direction
    assert_oracle(search, rows, 10, among)
    assert_oracle(search, rows[:10], 10, among, options=SearchOptions(ef_search=1, nprobe=1))

"""The single-query rescoring gives the batched rescoring's answer, ids and scores to the bit:
exclusions, zero rows, ties (equal rows, +0.0 against -0.0), -1 padding, k beyond the
candidates, float32 or float64 directions, and rows by columns or row-major."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.indexes.recall import held_out_rows, queries_of
from service.engine.search import cosine, rescoring
from service.engine.search.approximate import IndexParameters, build_index
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import NeighborQuery, SearchOptions
from service.engine.search.rescoring import (
    CHUNK,
    QUERY_CHUNK,
    rescore,
    rescore_batch,
    rescore_one,
)
from service.engine.search.store import RowStore
from service.engine.tables.table import EmbeddingTable

ROWS, WIDTH = 3000, 16


def awkward_table(seed: int = 0) -> EmbeddingTable:
    """Clustered rows with zero rows, exact duplicates (ties), and rows with no first component
    (their score against the first axis is +0.0 or -0.0)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(20, WIDTH))
    vectors = centres[rng.integers(0, 20, ROWS)] + 0.3 * rng.normal(size=(ROWS, WIDTH))
    vectors[[5, 900, 2999]] = 0
    vectors[[11, 12, 1500]] = vectors[10]
    vectors[20:60, 0] = 0
    return EmbeddingTable([f"w{i}" for i in range(ROWS)], vectors.astype(np.float32))


def row_major(table: EmbeddingTable) -> RowStore:
    """A store over a row-major copy of the rows (the service holds them by columns)."""
    copy = EmbeddingTable(list(table.tokens), table.vectors)
    object.__setattr__(copy, "vectors", np.ascontiguousarray(table.vectors))
    return RowStore.of(copy)


TABLE = awkward_table()
STORES = {"by columns": RowStore.of(TABLE), "row-major": row_major(TABLE)}


def assert_same(store: RowStore, query: NeighborQuery, positions: np.ndarray) -> None:
    one = rescore_one(store, query, positions)
    [batched] = rescore_batch(store, [query], [positions])
    assert one.ids.tolist() == batched.ids.tolist()
    assert one.scores.tobytes() == batched.scores.tobytes()  # to the bit, -0.0 included
    assert one.ids.dtype == batched.ids.dtype and one.scores.dtype == batched.scores.dtype


@pytest.mark.parametrize("layout", STORES)
@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    candidates=st.integers(0, CHUNK),
    padding=st.integers(0, 5),
    k=st.sampled_from([1, 3, 10, 50, CHUNK + 10]),
    exclusions=st.sampled_from([0, 1, 3, 200]),
    axis=st.booleans(),
    float32=st.booleans(),
)
def test_one_query_rescored_alone_is_the_batched_answer(
    layout: str,
    seed: int,
    candidates: int,
    padding: int,
    k: int,
    exclusions: int,
    axis: bool,
    float32: bool,
) -> None:
    store = STORES[layout]
    rng = np.random.default_rng(seed)
    # Candidates as an index proposes them, with the awkward rows among them; -1 pads the end.
    special = np.array([5, 900, 2999, 10, 11, 12, 1500, *range(20, 60)])
    pool = np.concatenate([special, rng.integers(0, ROWS, 4 * CHUNK)])
    positions = np.concatenate([rng.permutation(pool)[:candidates], np.full(padding, -1)]).astype(
        np.int64
    )
    # Excluded rows: some among the candidates, some not.
    excluded = frozenset(rng.choice(np.concatenate([positions, pool]), exclusions).tolist())
    excluded -= {-1}
    # On the first axis rows 20-59 score exactly +0.0 or -0.0; else a row's own direction.
    vector = np.eye(WIDTH)[0] if axis else store.directions(rng.choice(store.indexed, 1))[0]
    vector = vector.astype(np.float32 if float32 else np.float64)
    assert_same(store, NeighborQuery(vector, k, excluded), positions)


def test_every_exclusion_or_zero_row_leaves_an_empty_answer() -> None:
    store = STORES["by columns"]
    query = NeighborQuery(np.eye(WIDTH)[1], 10, frozenset({1, 2}))
    for positions in ([1, 2, 5, -1], [-1, -1], []):
        assert_same(store, query, np.asarray(positions, dtype=np.int64))
        assert rescore_one(store, query, np.asarray(positions, dtype=np.int64)).ids.size == 0


def test_many_candidates_take_the_batched_path_for_the_temporaries() -> None:
    # More than CHUNK candidates of one query are rescored CHUNK rows at a time, as before.
    store = STORES["by columns"]
    query = NeighborQuery(store.directions(np.array([100]))[0], 2000, frozenset({100}))
    positions = np.arange(ROWS, dtype=np.int64)
    [found] = rescore(store, [query], [positions])
    [batched] = rescore_batch(store, [query], [positions])
    assert found.ids.tolist() == batched.ids.tolist()
    assert found.scores.tobytes() == batched.scores.tobytes()


@pytest.mark.parametrize(
    ("budget_rows", "sharing"), [(1, 10**6), (60, 10**6), (10**6, 32), (10**6, 1)]
)
def test_a_large_batch_gathered_together_answers_as_each_query_alone(
    budget_rows: int, sharing: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A batch over rows stored by columns: dense enough, its candidate rows are gathered a
    # budget at a time (never one query's beyond it); each answer is still its query's answer
    # alone, to the bit, and the row-major rows' answer (the numpy rescoring's gathers; the
    # compiled one reads the table in place: test_compiled_steps.py).
    monkeypatch.setattr(rescoring, "GATHER_BUDGET", budget_rows * 4 * WIDTH)
    monkeypatch.setattr(rescoring, "SHARING", sharing)
    most = budget_rows
    gathered: list[int] = []
    original = rescoring._gathered

    def recorded(store: RowStore, positions: list[np.ndarray]) -> rescoring.Source:
        gathered.append(sum(len(p) for p in positions))
        return original(store, positions)

    monkeypatch.setattr(rescoring, "_gathered", recorded)
    rng = np.random.default_rng(budget_rows)
    store = STORES["by columns"]
    queries, positions = [], []
    for i in range(3 * QUERY_CHUNK + 5):
        vector = store.directions(rng.choice(store.indexed, 1))[0]
        excluded = frozenset(rng.integers(0, ROWS, 3).tolist())
        queries.append(NeighborQuery(vector, int(rng.integers(1, 30)), excluded))
        count = 500 if i == 40 else int(rng.integers(0, 40))
        pads = np.full(int(rng.integers(0, 3)), -1)
        positions.append(np.concatenate([rng.integers(0, ROWS, count), pads]).astype(np.int64))
    batched = rescore_batch(store, queries, positions)
    by_rows = rescore_batch(STORES["row-major"], queries, positions)
    for query, candidates, answer, other in zip(queries, positions, batched, by_rows, strict=True):
        one = rescore_one(store, query, candidates)
        for found in (answer, other):
            assert found.ids.tolist() == one.ids.tolist()
            assert found.scores.tobytes() == one.scores.tobytes()
    assert all(held <= most for held in gathered)
    if sharing == 1:
        assert gathered == []  # too sparse to share cache lines: read from the table
    elif budget_rows == 10**6:
        assert gathered == [sum(len(p) for p in positions)]  # all at once
    elif budget_rows == 60:
        assert len(gathered) > 3 and 500 not in gathered


@pytest.mark.parametrize("kind", ["fastscan", "hnsw"])
def test_a_served_query_answers_as_with_the_batched_rescoring(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real FAISS index, one query per call as served: the same candidates rescored alone and
    # by the batched rescoring give the same answers, exclusions and a k beyond them included.
    search = CosineSearch(TABLE)
    parameters = IndexParameters(kind=kind).resolved(ROWS, WIDTH, "test")  # type: ignore[arg-type]
    rows = held_out_rows(search.store)
    search.approximate = build_index(search.store, parameters, rows)
    queries = queries_of(search, rows, SearchOptions())
    queries[0] = NeighborQuery(queries[0].vector, 40, frozenset(range(0, ROWS, 3)))
    queries[1] = NeighborQuery(queries[1].vector, 100, frozenset())
    alone = [search.search([query])[0] for query in queries]
    monkeypatch.setattr(cosine, "rescore", rescore_batch)
    before = [search.search([query])[0] for query in queries]
    assert sum(len(answer.ids) for answer in alone) > 10 * len(queries)
    for one, other in zip(alone, before, strict=True):
        assert one.ids.tolist() == other.ids.tolist()
        assert one.scores.tobytes() == other.scores.tobytes()

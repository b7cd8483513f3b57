"""The steps after the pass in dots.c: the candidates (every column within the slack of a row's
depth-th best, exactly) and the rescoring's float64 sums (numpy's bits), and answers equal to
the numpy steps' to the bit."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from service.engine.search import dots, rescoring, selection
from service.engine.search.queries import NeighborQuery
from service.engine.search.rescoring import compiled_dots, rescore_batch, rescore_one
from service.engine.search.selection import CANDIDATE_ROOM, candidate_rows, compiled_candidates
from service.engine.search.store import RowStore, gather_rows
from tests.engine.test_rescoring import ROWS, STORES

# dots.c's steps run where its pass does: dots.c built, on a CPU with AVX-512.
selects = pytest.mark.skipif(not dots.SELECTS, reason="no compiled selection on this CPU")
rescores = pytest.mark.skipif(not dots.RESCORES, reason="no compiled rescoring on this CPU")


def within_slack(scores: np.ndarray, depth: int, slack: np.ndarray) -> list[list[int]]:
    """Per row, the columns at least its depth-th best minus its slack, compared in float64."""
    found = []
    for row, room in zip(scores, slack, strict=True):
        bound = float(np.sort(row)[-depth]) - room
        found.append(np.flatnonzero(row.astype(np.float64) >= bound).tolist())
    return found


def awkward_scores(rows: int, columns: int, seed: int) -> np.ndarray:
    """float32 scores with exact ties, -inf (masked rows) and a row of one value."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(rows, columns)).astype(np.float32)
    scores[:, rng.integers(0, columns, columns // 5)] = -np.inf
    ties = rng.integers(0, columns, columns // 7)
    scores[:, ties] = scores[:, ties[:1]]
    scores[0] = np.float32(0.25)
    return scores


@selects
@pytest.mark.parametrize("columns", [1, 2, 31, 32, 33, 64, 95, 1000, 30_522])
@pytest.mark.parametrize("depth", [1, 2, 10, 31, 100])
def test_candidates_are_every_column_within_the_slack_of_the_depth_th_best(
    columns: int, depth: int
) -> None:
    if depth > columns:
        depth = columns
    scores = awkward_scores(5, columns, seed=columns * depth)
    slack = np.array([0.0, 1e-7, 5e-5, 0.3, np.inf])
    found = compiled_candidates(scores, depth, slack)
    expected = within_slack(scores, depth, slack)
    if found is None:  # more ties than the room: numpy selects (the constant row, wide slack)
        assert max(map(len, expected)) > depth + CANDIDATE_ROOM
        return
    assert [f.tolist() for f in found] == expected
    assert all(f.dtype == np.int64 for f in found)


@selects
def test_the_compiled_candidates_hold_the_numpy_ones_bound_or_more() -> None:
    # numpy bounds by the best of each block of columns (lower than the depth-th best, so as
    # many or more); the compiled selection by the depth-th best itself.
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(40, 30_522)).astype(np.float32)
    scores[:, rng.integers(0, 30_522, 3_000)] = -np.inf
    scores[:, 100:120] = scores[:, 99:100]  # 21 ties
    for depth in (1, 10, 50):
        compiled = compiled_candidates(scores, depth, np.full(40, 5e-5))
        assert compiled is not None
        numpy = [np.sort(rows) for rows in selection._select(scores, depth, np.full(40, 5e-5))]
        for mine, theirs in zip(compiled, numpy, strict=True):
            assert np.isin(mine, theirs).all()


@selects
def test_too_many_ties_or_a_depth_out_of_reach_fall_back_to_numpy() -> None:
    ties = np.zeros((2, 3000), dtype=np.float32)
    assert compiled_candidates(ties, 10, np.zeros(2)) is None  # 3,000 > 10 + the room
    assert [len(rows) for rows in candidate_rows(ties, 10, 0.0, compiled=True)] == [3000, 3000]
    scores = awkward_scores(2, 50, seed=3)
    for depth in (0, 51):
        assert compiled_candidates(scores, depth, np.zeros(2)) is None
    assert compiled_candidates(scores.astype(np.float64), 5, np.zeros(2)) is None
    assert compiled_candidates(scores[:, ::2], 5, np.zeros(2)) is not None  # made contiguous


@rescores
@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("width", [1, 2, 7, 8, 9, 16, 127, 128, 129, 300, 384, 1000])
def test_compiled_sums_have_numpys_bits(order: str, width: int) -> None:
    rng = np.random.default_rng(width)
    vectors = np.asarray(rng.normal(size=(700, width)).astype(np.float32), order=order)
    vectors[3] = 0  # -0.0 products: numpy's sum is +0.0
    vectors[4, : width // 2] = 0
    ids = rng.integers(0, 700, 400).astype(np.int64)  # unsorted, repeated
    ids[:3] = 3
    owner = rng.integers(0, 6, ids.size).astype(np.int64)
    directions = rng.normal(size=(6, width))
    directions[1] = -np.abs(directions[1])
    got = compiled_dots(vectors, ids, directions, owner)
    expected = rescoring._dots(partial(gather_rows, vectors), ids, directions, owner)
    assert got.tobytes() == expected.tobytes()
    assert compiled_dots(vectors, ids[:0], directions, owner[:0]).size == 0
    for outside in (-1, 700):  # as numpy's gather refuses them, never read
        with pytest.raises(IndexError):
            compiled_dots(vectors, np.append(ids, outside), directions, np.append(owner, 0))


@rescores
@pytest.mark.parametrize("layout", STORES)
def test_answers_equal_the_numpy_rescoring_to_the_bit(layout: str) -> None:
    # A batch through dots.c, a lone query (rescore_one) through numpy: the same bits.
    store: RowStore = STORES[layout]
    rng = np.random.default_rng(7)
    queries, positions = [], []
    for i in range(70):
        vector = (
            store.directions(rng.choice(store.indexed, 1))[0]
            if i % 3
            else store.direction(rng.normal(size=store.width))
        )
        excluded = frozenset(rng.integers(0, ROWS, int(rng.integers(0, 4))).tolist())
        queries.append(NeighborQuery(vector, int(rng.integers(1, 30)), excluded))
        count = int(rng.integers(0, 60))
        pads = np.full(int(rng.integers(0, 3)), -1)
        positions.append(np.concatenate([rng.integers(0, ROWS, count), pads]).astype(np.int64))
    compiled = rescore_batch(store, queries, positions, compiled=True)
    alone = [rescore_one(store, q, p) for q, p in zip(queries, positions, strict=True)]
    numpy = rescore_batch(store, queries, positions)
    for answers in (compiled, alone):
        for got, expected in zip(answers, numpy, strict=True):
            assert got.ids.tolist() == expected.ids.tolist()
            assert got.scores.tobytes() == expected.scores.tobytes()

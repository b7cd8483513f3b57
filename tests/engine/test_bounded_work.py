"""Every query's temporaries stay bounded whatever its terms, weights, exclusions and batch.

Measured with tracemalloc, which sees numpy's allocations: the peak of extra memory while the
engine answers the most expensive queries the default limits allow on the real table.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import AnalogyQuery, NeighborQuery, ScoreQuery, Term
from service.engine.search.scoring import plan_score, score
from service.engine.tables.table import EmbeddingTable

# "A few tens of MB", all included: a pass holds at most 16 MiB of float32 scores
# (kernels.SCORES_BUDGET), and the worst batch's own queries (256 x 1,000 exclusions, 4,096 term
# vectors in float64) are about 21 MB of it. Before the bounds: 2.1 GB for 3CosMul.
PEAK_BYTES = 64 * 2**20
TERMS, K, EXCLUDE, BATCH = 16, 1000, 1000, 256


def peak_of(work: Callable[[], Any]) -> int:
    """Bytes allocated at the peak of `work`, above what was held before it."""
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def index(minilm: EmbeddingTable) -> CosineSearch:
    return CosineSearch(minilm)


def worst_analogy(minilm: EmbeddingTable, method: str, seed: int) -> AnalogyQuery:
    rng = np.random.default_rng(seed)
    rows = rng.choice(np.arange(2000, minilm.rows), TERMS + EXCLUDE, replace=False)
    return AnalogyQuery(
        positive=tuple(Term(row=int(r)) for r in rows[: TERMS // 2]),
        negative=tuple(Term(row=int(r)) for r in rows[TERMS // 2 : TERMS]),
        k=K,
        method=method,  # type: ignore[arg-type]
        exclude=frozenset(int(r) for r in rows[TERMS:]),
    )


@pytest.mark.parametrize("method", ["add", "mul"])
def test_the_worst_analogy_batch_stays_within_tens_of_megabytes(index, minilm, method) -> None:
    queries = [worst_analogy(minilm, method, seed) for seed in range(BATCH)]
    assert peak_of(lambda: index.analogies(queries)) < PEAK_BYTES


def test_cosmul_with_only_positive_terms_and_exclusions_stays_bounded(index, minilm) -> None:
    """The case that took 5.1 s and 1.4 GB: every row became a candidate (slack of -inf)."""
    rows = np.arange(3000, 3000 + TERMS)
    query = AnalogyQuery(
        positive=tuple(Term(row=int(r)) for r in rows),
        k=10,
        method="mul",
        exclude=frozenset(range(4000, 5000)),
    )
    assert peak_of(lambda: index.analogies([query])) < PEAK_BYTES


def test_the_worst_neighbour_batch_stays_within_tens_of_megabytes(index, minilm) -> None:
    rng = np.random.default_rng(3)
    queries = [
        NeighborQuery(rng.normal(size=minilm.width), K, frozenset(range(EXCLUDE)))
        for _ in range(BATCH)
    ]
    assert peak_of(lambda: index.neighbors(queries)) < PEAK_BYTES


def test_the_worst_scoring_batch_stays_within_tens_of_megabytes(index, minilm) -> None:
    rng = np.random.default_rng(4)
    queries = [
        plan_score(index, ScoreQuery(rng.normal(size=minilm.width), K, softmax=True, target=5))
        for _ in range(BATCH)
    ]
    assert peak_of(lambda: score(index, queries)) < PEAK_BYTES


@pytest.fixture
def tiny_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scores budget of 64 KiB: the default table is scored in dozens of row blocks."""
    from service.engine.search import cosmul, kernels

    monkeypatch.setattr(kernels, "SCORES_BUDGET", 64 * 1024)
    monkeypatch.setattr(cosmul, "TERMS_PER_PASS", 4)


def mixed_queries(minilm: EmbeddingTable) -> tuple[list[NeighborQuery], list[AnalogyQuery]]:
    rng = np.random.default_rng(17)
    neighbours = [
        NeighborQuery(
            rng.normal(size=minilm.width),
            int(rng.integers(1, 50)),
            frozenset(int(r) for r in rng.choice(minilm.rows, 20)),
            restrict=[None, 5000, 29000][i % 3],
        )
        for i in range(40)
    ]
    analogies = []
    for i in range(40):
        a, b, c, d = (int(r) for r in rng.choice(np.arange(2000, minilm.rows), 4, replace=False))
        analogies.append(
            AnalogyQuery(
                positive=(Term(row=b), Term(row=c, weight=[1.0, 3.0][i % 2])),
                negative=(Term(row=a),),
                k=int(rng.integers(1, 30)),
                method=["add", "mul"][i % 2],  # type: ignore[arg-type]
                exclude=frozenset([d]),
                restrict=[None, 10000][i % 2],
            )
        )
    return neighbours, analogies


def test_answers_do_not_depend_on_the_scores_budget(minilm, index, request) -> None:
    neighbours, analogies = mixed_queries(minilm)
    whole = index.neighbors(neighbours), index.analogies(analogies)
    request.getfixturevalue("tiny_budget")
    blocked = index.neighbors(neighbours), index.analogies(analogies)
    for kind in range(2):
        for one, other in zip(whole[kind], blocked[kind], strict=True):
            np.testing.assert_array_equal(one.ids, other.ids)
            np.testing.assert_array_equal(one.scores, other.scores)


def test_cosmul_with_huge_weights_ranks_rows_and_never_answers_a_zero_row() -> None:
    """Exponents of 1e6 underflow every product to 0: ranked by the log objective instead, the
    answer is the rows nearest the terms, and a zero (padding) row never appears."""
    rng = np.random.default_rng(2)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    vectors[0] = 0  # padding
    tokens = [f"t{i}" for i in range(50)]
    index = CosineSearch(EmbeddingTable(tokens, vectors))
    query = AnalogyQuery(positive=(Term(row=7, weight=1e6),), k=5, method="mul")
    [result] = index.analogies([query])
    assert 0 not in result.ids.tolist() and 7 not in result.ids.tolist()
    assert np.isfinite(result.scores).all()
    cosines = (
        (vectors @ vectors[7])
        / (np.linalg.norm(vectors, axis=1) + 1e-30)
        / np.linalg.norm(vectors[7])
    )
    cosines[[0, 7]] = -np.inf
    assert result.ids.tolist() == np.argsort(-cosines)[:5].tolist()


@pytest.mark.parametrize("budget", [None, 64 * 1024])
def test_exclusions_are_left_out_of_the_selection_exactly(
    minilm, index, monkeypatch, budget
) -> None:
    """With k candidates only (exclusions masked, not added to the depth), excluding a query's
    whole top 50 still answers the next k rows, as a brute-force float64 search does."""
    if budget is not None:
        from service.engine.search import kernels

        monkeypatch.setattr(kernels, "SCORES_BUDGET", budget)
    rng = np.random.default_rng(8)
    unit = minilm.vectors.astype(np.float64)
    norms = np.linalg.norm(unit, axis=1)
    for _ in range(5):
        vector = rng.normal(size=minilm.width)
        exact = unit @ (vector / np.linalg.norm(vector)) / norms
        top = np.argsort(-exact)
        excluded = frozenset(int(row) for row in top[:50]) | frozenset(
            int(row) for row in rng.choice(minilm.rows, 200)
        )
        [result] = index.neighbors([NeighborQuery(vector, 10, excluded)])
        expected = [int(row) for row in top if int(row) not in excluded][:10]
        assert result.ids.tolist() == expected
        np.testing.assert_allclose(result.scores, exact[expected], rtol=0, atol=1e-12)

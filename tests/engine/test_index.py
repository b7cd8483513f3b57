"""The search engine on small tables: zero rows, exclusions, restrict, batching, scoring."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from service.engine.errors import DimensionMismatch, InvalidQuery, ZeroVector
from service.engine.search.cosine import AnalogyQuery, CosineSearch, NeighborQuery, Term
from service.engine.search.queries import ScoreQuery
from service.engine.search.scoring import plan_score, score
from service.engine.search.terms import shares_terms
from service.engine.tables.table import EmbeddingTable
from tests.conftest import SMALL_TOKENS, small_vectors


@pytest.fixture()
def small() -> CosineSearch:
    return CosineSearch(EmbeddingTable(SMALL_TOKENS, small_vectors()))


def search(index: CosineSearch, row: int, k: int, **options: object) -> list[int]:
    vector = index.table.vectors[row]
    query = NeighborQuery(vector, k, frozenset({row}), **options)  # type: ignore[arg-type]
    return index.neighbors([query])[0].ids.tolist()


def test_zero_rows_are_never_neighbors(small: CosineSearch) -> None:
    for row in range(1, small.table.rows):
        assert 0 not in search(small, row, k=small.table.rows)
    assert small.zero_rows == 1


def test_a_zero_row_query_is_refused(small: CosineSearch) -> None:
    with pytest.raises(ZeroVector, match="PAD"):
        small.store.directions(np.array([0]))
    with pytest.raises(ZeroVector):
        small.neighbors([NeighborQuery(np.zeros(4, np.float32), 3)])


def test_the_query_row_and_exclusions_are_left_out(small: CosineSearch) -> None:
    everything = search(small, 3, k=20)
    assert 3 not in everything
    assert len(everything) == small.table.rows - 2  # minus the query and the zero row
    fewer = small.neighbors(
        [NeighborQuery(small.table.vectors[3], 20, frozenset({3, everything[0]}))]
    )[0]
    assert fewer.ids.tolist() == everything[1:]


def test_restrict_searches_only_the_first_rows(small: CosineSearch) -> None:
    assert set(search(small, 2, k=10, restrict=5)) == {1, 3, 4}


def test_vector_width_is_checked(small: CosineSearch) -> None:
    with pytest.raises(DimensionMismatch):
        small.neighbors([NeighborQuery(np.ones(5, np.float32), 3)])
    with pytest.raises(DimensionMismatch):
        plan_score(small, ScoreQuery(np.ones(3, np.float32), 3))


def test_terms_that_cancel_have_no_direction(small: CosineSearch) -> None:
    query = AnalogyQuery(positive=(Term(row=3),), negative=(Term(row=3),), k=3)
    with pytest.raises(ZeroVector):
        small.analogies([query])


def test_cosmul_needs_a_positive_term(small: CosineSearch) -> None:
    with pytest.raises(InvalidQuery):
        small.analogies([AnalogyQuery(positive=(), negative=(Term(row=3),), method="mul")])


def test_cosmul_never_answers_zero_rows_or_inputs(small: CosineSearch) -> None:
    query = AnalogyQuery(positive=(Term(row=2), Term(row=5)), negative=(Term(row=4),), k=20)
    result = small.analogies([AnalogyQuery(**{**query.__dict__, "method": "mul"})])[0]
    assert not {0, 2, 4, 5} & set(result.ids.tolist())
    assert len(result.ids) == small.table.rows - 4


def test_score_is_the_raw_dot_product(small: CosineSearch) -> None:
    vector = np.arange(4, dtype=np.float32)
    query = ScoreQuery(vector, k=3, softmax=True, temperature=2.0, target=6)
    [scores] = score(small, [plan_score(small, query)])
    logits = small.table.vectors @ vector
    assert scores.ids.tolist() == np.argsort(-logits)[:3].tolist()
    np.testing.assert_allclose(scores.logits, np.sort(logits)[::-1][:3], rtol=1e-6)
    expected = np.exp(logits / 2) / np.exp(logits / 2).sum()
    np.testing.assert_allclose(scores.probabilities, np.sort(expected)[::-1][:3], rtol=1e-6)
    assert scores.target_rank == 1 + int((logits > logits[6]).sum())
    assert scores.target_probability == pytest.approx(expected[6], rel=1e-6)


tables = st.integers(2, 40).flatmap(
    lambda rows: arrays(
        np.float32, (rows, 6), elements=st.floats(-4, 4, width=32, allow_subnormal=False)
    )
)


@settings(max_examples=60, deadline=None)
@given(vectors=tables, k=st.integers(1, 12))
def test_properties_of_neighbor_search(vectors: np.ndarray, k: int) -> None:
    index = CosineSearch(EmbeddingTable([f"t{i}" for i in range(len(vectors))], vectors))
    indexed = index.store.norms64 > 0
    queries = [NeighborQuery(vectors[r], k) for r in range(len(vectors)) if indexed[r]]
    batched = index.neighbors(queries)
    for query, result in zip(queries, batched, strict=True):
        single = index.neighbors([query])[0]
        np.testing.assert_array_equal(single.ids, result.ids)  # batch == single, exactly
        np.testing.assert_array_equal(single.scores, result.scores)
        assert len(result.ids) <= k
        assert (np.diff(result.scores) <= 1e-6).all()  # sorted by score
        assert not set(result.ids.tolist()) & set(np.flatnonzero(~indexed).tolist())
        assert result.scores[0] == pytest.approx(1.0, abs=1e-5)  # a stored row is its own top-1


# Rows drawn from a few values, so that many rows tie exactly or nearly (and some are zero):
# FAISS's cut at k plus a margin then falls inside a run of ties and must be searched deeper.
tied_tables = st.integers(8, 60).flatmap(
    lambda rows: arrays(np.float32, (rows, 3), elements=st.sampled_from([0.0, 1.0, -1.0, 1e-3]))
)


@settings(max_examples=60, deadline=None)
@given(vectors=tied_tables, k=st.integers(1, 8), excluded=st.integers(0, 12), seed=st.integers())
def test_the_faiss_kernel_answers_as_blas_through_ties_zero_rows_and_exclusions(
    vectors: np.ndarray, k: int, excluded: int, seed: int
) -> None:
    table = EmbeddingTable([f"t{i}" for i in range(len(vectors))], vectors)
    blas, faiss = CosineSearch(table, "blas"), CosineSearch(table, "faiss")
    rows = np.flatnonzero(blas.store.norms64 > 0)
    if not rows.size:
        return
    rng = np.random.default_rng(seed % 2**32)
    queries = [
        NeighborQuery(vectors[row], k, frozenset(rng.choice(len(vectors), excluded).tolist()))
        for row in rows
    ]
    queries.append(NeighborQuery(vectors[rows[0]], k, restrict=len(vectors) // 2))
    for ours, theirs in zip(blas.neighbors(queries), faiss.neighbors(queries), strict=True):
        np.testing.assert_array_equal(ours.ids, theirs.ids)
        np.testing.assert_array_equal(ours.scores, theirs.scores)


def test_both_kernels_give_the_same_answers(minilm: EmbeddingTable) -> None:
    blas, faiss = CosineSearch(minilm, "blas"), CosineSearch(minilm, "faiss")
    rng = np.random.default_rng(3)
    queries = [NeighborQuery(rng.normal(size=minilm.width), 10) for _ in range(40)]
    queries += [NeighborQuery(rng.normal(size=minilm.width), 5, restrict=3000) for _ in range(10)]
    for ours, theirs in zip(blas.neighbors(queries), faiss.neighbors(queries), strict=True):
        np.testing.assert_array_equal(ours.ids, theirs.ids)
        np.testing.assert_array_equal(ours.scores, theirs.scores)
    assert "FAISS" in faiss.kind


def test_analogies_sharing_terms_equal_each_alone(minilm: EmbeddingTable) -> None:
    # 60 analogies over 12 words take the shared-term path; alone, each takes the direct one.
    index = CosineSearch(minilm)
    words = ["king", "queen", "man", "woman", "paris", "france", "berlin", "germany", "boy",
             "girl", "rome", "italy"]  # fmt: skip
    rows = [minilm.token_to_id[word] for word in words]
    rng = np.random.default_rng(9)
    queries = []
    for i in range(60):
        a, b, c = (int(r) for r in rng.choice(rows, size=3, replace=False))
        # Equal weights are summed by adding and subtracting, others by multiplying; a few
        # queries have only negative terms.
        weight = [1.0, 1.0, 0.5, 2.0][i % 4]
        positive = (Term(row=b), Term(row=c, weight=weight)) if i % 10 else ()
        negative = (Term(row=a),) if i % 10 else (Term(row=a), Term(row=b, weight=weight))
        queries.append(
            AnalogyQuery(positive=positive, negative=negative, k=int(rng.integers(1, 20)))
        )
    prepared = [index.plan_analogy(query) for query in queries]
    assert shares_terms(prepared, minilm.rows)
    for query, together in zip(queries, index.analogies(queries), strict=True):
        [alone] = index.analogies([query])
        np.testing.assert_array_equal(together.ids, alone.ids)
        np.testing.assert_array_equal(together.scores, alone.scores)


def exact_top(table: EmbeddingTable, direction: np.ndarray, k: int, exclude: int) -> list[int]:
    """The top k by float64 cosine over every row with a direction, ties by row."""
    raw = table.vectors.astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", raw, raw))
    scores = np.sum(raw * direction, axis=1) / np.where(norms > 0, norms, 1)
    rows = [r for r in np.lexsort((np.arange(len(raw)), -scores)) if norms[r] > 0 and r != exclude]
    return [int(r) for r in rows[:k]]


@settings(max_examples=40, deadline=None)
@given(
    exponents=arrays(np.int64, 60, elements=st.integers(-140, 120)),
    seed=st.integers(0, 2**16),
    k=st.integers(1, 15),
)
def test_rows_of_any_magnitude_are_ranked_exactly(exponents, seed, k) -> None:
    # Scoring the raw rows divides by their norms: rows near float32's range (1e36) or of
    # subnormal size (1e-42) must still rank exactly as float64 cosines rank them.
    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(60, 5))
    vectors = (directions * 2.0 ** exponents[:, None].astype(np.float64)).astype(np.float32)
    table = EmbeddingTable([f"t{i}" for i in range(60)], vectors)
    index = CosineSearch(table)
    for row in rng.choice(np.flatnonzero(index.store.norms64 > 0), size=5):
        direction = index.store.directions(np.array([row]))[0]
        found = index.neighbors([NeighborQuery(vectors[row], k, frozenset({int(row)}))])[0]
        assert found.ids.tolist() == exact_top(table, direction, k, int(row))


def test_the_exact_path_holds_one_copy_of_the_rows(minilm: EmbeddingTable) -> None:
    index = CosineSearch(minilm)
    assert index.kernel.nbytes < 0.01 * minilm.vectors.nbytes  # a scale per row, no copy
    assert index.nbytes < 1.1 * minilm.vectors.nbytes

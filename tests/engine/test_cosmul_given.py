"""3CosMul with raw vectors as given (gensim's most_similar_cosmul) against numpy's float64
arithmetic: the same rows as every row scored exactly, whatever the vectors' norms (factors
that turn negative, poles where the denominator crosses 0), batch or alone, any scores budget;
and 3CosAdd with only negative terms, gensim's minus the mean of the negative terms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.errors import InvalidQuery
from service.engine.search import cosmul
from service.engine.search.cosine import CosineSearch
from service.engine.search.queries import AnalogyQuery, CosmulQuery, Term
from service.engine.search.ranking import objectives as every_objective
from service.engine.tables.table import EmbeddingTable
from tests.engine.test_rescoring import awkward_table

NORMS = [0.0, 1e-3, 0.3, 1.0, 1.7, 3.0, 40.0, 1e6]


def gensim_objectives(table: EmbeddingTable, positive: list, negative: list) -> np.ndarray:
    """gensim's most_similar_cosmul objective of every row, in numpy float64: a token's row at
    unit length, a raw vector as given; NaN for a zero row."""
    rows = table.vectors.astype(np.float64)
    norms = np.sqrt(np.sum(rows * rows, axis=1))

    def factor(term: int | np.ndarray) -> np.ndarray:
        vector = rows[term] / norms[term] if isinstance(term, int) else term
        with np.errstate(divide="ignore", invalid="ignore"):
            return (1 + rows @ vector / norms) / 2

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        top = np.prod([factor(term) for term in positive], axis=0)
        if not negative:
            return top
        return top / (np.prod([factor(term) for term in negative], axis=0) + 1e-6)


def query_of(positive: list, negative: list, k: int, **options: object) -> AnalogyQuery:
    def term(item: int | np.ndarray) -> Term:
        return Term(row=item) if isinstance(item, int) else Term(vector=item)

    return AnalogyQuery(
        positive=tuple(map(term, positive)),
        negative=tuple(map(term, negative)),
        k=k,
        method="mul",
        vector_terms="as_given",
        **options,  # type: ignore[arg-type]
    )


def assert_same_top(found, expected: np.ndarray, k: int, excluded: set[int]) -> None:
    """The found rows are numpy's top k, scores within 1e-9 relative (ties either way)."""
    eligible = [r for r in np.lexsort((np.arange(expected.size), -expected)) if r not in excluded]
    eligible = [r for r in eligible if not np.isnan(expected[r])]
    best = np.asarray(eligible[:k], dtype=np.int64)
    assert found.ids.size == best.size
    np.testing.assert_allclose(found.scores, expected[found.ids], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(expected[found.ids], expected[best], rtol=1e-9, atol=1e-12)


def random_vector(rng: np.random.Generator, width: int) -> np.ndarray:
    direction = rng.normal(size=width)
    return direction / np.linalg.norm(direction) * NORMS[int(rng.integers(len(NORMS)))]


def test_raw_vectors_of_any_norm_score_as_gensim(minilm: EmbeddingTable) -> None:
    search = CosineSearch(minilm)
    rng = np.random.default_rng(11)
    zero = set(np.flatnonzero(search.store.norms64 == 0).tolist())
    for case in range(60):
        a, b, c = (int(r) for r in rng.choice(minilm.rows, 3, replace=False))
        vector, other = random_vector(rng, minilm.width), random_vector(rng, minilm.width)
        positive, negative = [[b, vector], [vector, other], [b, c]][case % 3], [a]
        if case % 4 == 1:
            negative = [other]  # a negative raw vector: of norm > 1, a pole
        k = int(rng.integers(1, 30))
        [found] = search.analogies([query_of(positive, negative, k)])
        rows = {t for t in positive + negative if isinstance(t, int)}
        assert_same_top(found, gensim_objectives(minilm, positive, negative), k, rows | zero)


def all_rows_exactly(search: CosineSearch, query: AnalogyQuery):
    """The plan's answer from every eligible row scored exactly (no candidate selection)."""
    plan = search.plan_analogy(query)
    assert isinstance(plan, CosmulQuery) and plan.scales is not None
    store = search.store
    eligible = np.setdiff1d(np.flatnonzero(store.norms64 > 0), list(plan.exclude))
    return cosmul._exact(store, plan, eligible[eligible < store.searchable(plan.restrict)])


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12), pole=st.booleans())
def test_candidates_lose_no_row_of_the_exact_answer(seed: int, k: int, pole: bool) -> None:
    # Rows of awkward magnitudes and duplicates; with `pole`, a negative vector whose factor is
    # (nearly) -1e-6 at some rows, so their denominators are (nearly) 0.
    rng = np.random.default_rng(seed)
    table = awkward_table(seed % 7)
    search = CosineSearch(table)
    width = table.width
    vector, other = random_vector(rng, width), random_vector(rng, width)
    if pole:
        row = table.vectors[int(rng.integers(table.rows))].astype(np.float64)
        other = -row / max(np.linalg.norm(row), 1e-30) * (1 + 2e-6 + float(rng.normal()) * 1e-9)
    positive = [vector, int(rng.integers(table.rows))]
    query = query_of(positive, [other], k, restrict=int(rng.integers(k, table.rows + 1)))
    if search.store.norms64[positive[1]] == 0:
        return
    [found] = search.analogies([query])
    exact = all_rows_exactly(search, query)
    np.testing.assert_array_equal(found.ids, exact.ids)
    np.testing.assert_array_equal(found.scores, exact.scores)


def test_a_batch_answers_as_each_query_alone(minilm: EmbeddingTable, monkeypatch) -> None:
    search = CosineSearch(minilm)
    rng = np.random.default_rng(4)
    queries = [
        query_of([int(rng.integers(minilm.rows)), random_vector(rng, minilm.width)],
                 [random_vector(rng, minilm.width)], int(rng.integers(1, 20)))
        for _ in range(12)
    ]  # fmt: skip
    together = search.analogies(queries)
    monkeypatch.setattr(cosmul, "TERMS_PER_PASS", 2)  # one query a pass, rows in blocks too
    for query, result in zip(queries, together, strict=True):
        [alone] = search.analogies([query])
        np.testing.assert_array_equal(result.ids, alone.ids)
        np.testing.assert_array_equal(result.scores, alone.scores)


def test_every_row_s_objective_is_the_analogy_s(minilm: EmbeddingTable) -> None:
    search = CosineSearch(minilm)
    rng = np.random.default_rng(8)
    positive = [int(minilm.token_to_id["king"]), random_vector(rng, minilm.width) * 5]
    negative = [random_vector(rng, minilm.width) * 3]
    query = query_of(positive, negative, 20)
    plan = search.plan_analogy(query)
    assert isinstance(plan, CosmulQuery)
    scores = every_objective(search.store, plan, 0, minilm.rows)
    [found] = search.analogies([query])
    np.testing.assert_allclose(scores[found.ids], found.scores, rtol=1e-9)
    expected = gensim_objectives(minilm, positive, negative)
    finite = ~np.isnan(expected)
    np.testing.assert_allclose(scores[finite], expected[finite], rtol=1e-9, atol=1e-12)
    assert np.isnan(scores[~finite]).all()


def test_a_zero_vector_is_one_half_at_every_row(minilm: EmbeddingTable) -> None:
    search = CosineSearch(minilm)
    king = int(minilm.token_to_id["king"])
    zero = np.zeros(minilm.width)
    [given_zero] = search.analogies([query_of([king, zero], [], 5)])
    [alone] = search.analogies([AnalogyQuery(positive=(Term(row=king),), k=5, method="mul")])
    np.testing.assert_array_equal(given_zero.ids, alone.ids)
    np.testing.assert_allclose(given_zero.scores, alone.scores / 2, rtol=1e-12)


def test_unit_terms_are_unchanged_and_weights_are_refused(minilm: EmbeddingTable) -> None:
    search = CosineSearch(minilm)
    rows = [int(minilm.token_to_id[word]) for word in ("king", "woman", "man")]
    unit = AnalogyQuery(
        positive=(Term(row=rows[0]), Term(row=rows[1])),
        negative=(Term(row=rows[2]),),
        k=5,
        method="mul",
    )
    [as_given] = search.analogies([query_of(rows[:2], rows[2:], 5)])
    np.testing.assert_array_equal(as_given.ids, search.analogies([unit])[0].ids)
    weighted = AnalogyQuery(
        positive=(Term(row=rows[0], weight=2.0), Term(vector=np.ones(minilm.width))),
        method="mul",
        vector_terms="as_given",
    )
    with pytest.raises(InvalidQuery, match="takes no weights"):
        search.analogies([weighted])


def test_only_negative_terms_are_minus_their_mean(minilm: EmbeddingTable) -> None:
    # gensim's most_similar(negative=[a, b]): the cosine with -(unit(a) + unit(b)) / 2.
    search = CosineSearch(minilm)
    rng = np.random.default_rng(5)
    rows64 = minilm.vectors.astype(np.float64)
    norms = np.sqrt(np.sum(rows64 * rows64, axis=1))
    zero = set(np.flatnonzero(norms == 0).tolist())
    for case in range(40):
        a, b = (int(r) for r in rng.choice(minilm.rows, 2, replace=False))
        vector = rng.normal(size=minilm.width)
        terms = (Term(row=a), Term(row=b) if case % 2 else Term(vector=vector, weight=0.5))
        query = AnalogyQuery(positive=(), negative=terms, k=10)
        [found] = search.analogies([query])
        mean = -(rows64[a] / norms[a]) - (rows64[b] / norms[b] if case % 2 else 0.5 * vector)
        with np.errstate(divide="ignore", invalid="ignore"):
            cosines = rows64 @ (mean / np.linalg.norm(mean)) / norms
        assert_same_top(found, cosines, 10, {a, b} | zero)

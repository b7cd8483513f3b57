"""The engine against gensim's KeyedVectors on the same real table: the trusted oracle."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from gensim.models import KeyedVectors

from service.engine.session import TokenScore
from service.engine.tables.table import EmbeddingTable

QUERIES = 200
TOPN = 10
SCORE_TOLERANCE = 1e-5
# FAISS and gensim sum in different orders; rows whose scores differ by less than this are a tie
# and may come in either order.
TIE = 1e-6

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gensim_vectors(minilm: EmbeddingTable) -> KeyedVectors:
    """gensim's KeyedVectors holding exactly the rows the engine serves."""
    vectors = KeyedVectors(vector_size=minilm.width)
    vectors.add_vectors(list(minilm.tokens), minilm.vectors.copy())
    return vectors


@pytest.fixture(scope="module")
def random_tokens(minilm: EmbeddingTable) -> Callable[[int], list[list[str]]]:
    """Groups of distinct random tokens, drawn over the whole vocabulary (rare rows too)."""
    rng = np.random.default_rng(2024)

    def draw(group: int) -> list[list[str]]:
        rows = [rng.choice(minilm.rows, size=group, replace=False) for _ in range(QUERIES)]
        return [[minilm.tokens[int(r)] for r in group_rows] for group_rows in rows]

    return draw


def assert_same_ranking(
    ours: Sequence[TokenScore], theirs: Sequence[TokenScore], deeper: Sequence[TokenScore]
) -> None:
    """Same tokens in the same order (up to exact ties) and scores within the tolerance."""
    assert len(ours) == len(theirs)
    theirs_by_token = dict(deeper)
    for (token, score), (their_token, their_score) in zip(ours, theirs, strict=True):
        assert score == pytest.approx(their_score, abs=SCORE_TOLERANCE)
        if token != their_token:
            assert token in theirs_by_token, f"{token!r} is not among gensim's answers"
            assert abs(theirs_by_token[token] - their_score) < TIE, (token, their_token)


def test_neighbors_equal_gensim(minilm_session, gensim_vectors, random_tokens) -> None:
    for [token] in random_tokens(1):
        ours = minilm_session.most_similar([token], topn=TOPN)
        deeper = gensim_vectors.most_similar(token, topn=TOPN + 5)
        assert_same_ranking(ours, deeper[:TOPN], deeper)


def test_restricted_neighbors_equal_gensim(minilm_session, gensim_vectors, random_tokens) -> None:
    for [token] in random_tokens(1)[:50]:
        ours = minilm_session.most_similar([token], topn=TOPN, restrict_vocab=5000)
        deeper = gensim_vectors.most_similar(token, topn=TOPN + 5, restrict_vocab=5000)
        assert_same_ranking(ours, deeper[:TOPN], deeper)


def test_vector_neighbors_equal_gensim(minilm_session, gensim_vectors) -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        vector = rng.normal(size=gensim_vectors.vector_size).astype(np.float32)
        ours = minilm_session.similar_by_vector(vector, topn=TOPN)
        deeper = gensim_vectors.similar_by_vector(vector, topn=TOPN + 5)
        assert_same_ranking(ours, deeper[:TOPN], deeper)


def test_analogies_equal_gensim(minilm_session, gensim_vectors, random_tokens) -> None:
    for a, b, c in random_tokens(3):
        ours = minilm_session.most_similar([b, c], [a], topn=TOPN)
        deeper = gensim_vectors.most_similar(positive=[b, c], negative=[a], topn=TOPN + 5)
        assert_same_ranking(ours, deeper[:TOPN], deeper)


def test_cosmul_analogies_equal_gensim(minilm_session, gensim_vectors, random_tokens) -> None:
    for a, b, c in random_tokens(3):
        ours = minilm_session.most_similar_cosmul([b, c], [a], topn=TOPN)
        deeper = gensim_vectors.most_similar_cosmul(positive=[b, c], negative=[a], topn=TOPN + 5)
        assert_same_ranking(ours, deeper[:TOPN], deeper)


def test_similarity_equals_gensim(minilm_session, gensim_vectors, random_tokens) -> None:
    for a, b in random_tokens(2):
        expected = gensim_vectors.similarity(a, b)
        assert minilm_session.similarity(a, b) == pytest.approx(expected, abs=SCORE_TOLERANCE)


def test_known_answers_on_the_default_table(minilm_session) -> None:
    neighbors = minilm_session.most_similar(["king"], topn=2)
    assert [t for t, _ in neighbors] == ["kings", "queen"]
    assert [round(s, 3) for _, s in neighbors] == [0.690, 0.627]
    [(token, score)] = minilm_session.most_similar(["king", "woman"], ["man"], topn=1)
    assert (token, round(score, 3)) == ("queen", 0.502)
    [(capital, _)] = minilm_session.most_similar(["paris", "germany"], ["france"], topn=1)
    assert capital == "berlin"


def test_distances_and_ranks_equal_gensim(minilm_session, gensim_vectors, random_tokens) -> None:
    for first, second in random_tokens(2)[:60]:
        theirs = gensim_vectors.distances(first)
        np.testing.assert_allclose(minilm_session.distances(first), theirs, atol=SCORE_TOLERANCE)
        bound = theirs[gensim_vectors.key_to_index[second]]
        ties = int(np.count_nonzero(np.abs(theirs - bound) < TIE))
        expected = gensim_vectors.rank(first, second)
        assert abs(minilm_session.rank(first, second) - expected) <= ties
        ours, local = (
            minilm_session.closer_than(first, second),
            gensim_vectors.closer_than(first, second),
        )
        differing = set(ours) ^ set(local)
        distance = {t: theirs[gensim_vectors.key_to_index[t]] for t in differing}
        assert all(abs(distance[t] - bound) < TIE for t in differing)

"""RemoteKeyedVectors against gensim on the same table files for the calls the server learnt
last: most_similar with negative terms alone, and most_similar_cosmul with raw vectors of any
norm (gensim scales their cosines by their norms). Hundreds of seeded queries a table, top n
and every row's score: the same keys up to gensim's ties, scores within 1e-5.

A negative vector of norm above 1 makes a pole: its factor (1 + s cos) / 2 crosses 0, and the
rows nearest the crossing, the top of the answer, have denominators near 1e-6. There gensim's
own float32 rounding moves its scores by far more than 1e-5 (the service scores in float64), so
those queries are compared with gensim on a float64 copy of the same rows: gensim's arithmetic,
without its rounding.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest
from gensim.models import KeyedVectors

from tests.client.parity import (
    QUERIES,
    SCORE_TOLERANCE,
    TOPN,
    Pair,
    assert_same_ranking,
    assert_same_scores,
    draw,
    float64_copy,
)

pytestmark = pytest.mark.slow

NORMS = [0.05, 0.5, 1.0, 2.0, 7.0, 40.0]


def test_most_similar_of_negative_terms_alone(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 17)
    rng = np.random.default_rng(17)
    for query in range(QUERIES):
        a, b = keys(2)
        vector = local[b] * np.float32(rng.uniform(0.5, 2))
        negative: list[Any] = [[a], [a, b], [(a, -2.0), b], [a, vector]][query % 4]
        if query % 8 == 5:
            negative = [local.key_to_index[a]]  # a row number, as gensim takes it
        deeper = local.most_similar(negative=negative, topn=TOPN + 5)
        answer = remote.most_similar(negative=negative, topn=TOPN)
        assert_same_ranking(answer, deeper[:TOPN], deeper)
        if query % 10 == 0:
            every = remote.most_similar(negative=negative, topn=None)
            assert_same_scores(every, local.most_similar(negative=negative, topn=None))


@cache
def exact_copy(name: str, local: KeyedVectors) -> KeyedVectors:
    """The float64 copy of one parity table, made once."""
    return float64_copy(local)


def raw_vector(rng: np.random.Generator, width: int) -> np.ndarray:
    """A float32 vector of a random direction and one of NORMS."""
    direction = rng.normal(size=width)
    norm = NORMS[int(rng.integers(len(NORMS)))]
    return (direction / np.linalg.norm(direction) * norm).astype(np.float32)


def cosmul_terms(query: int, keys: Any, rng: np.random.Generator, width: int) -> tuple[list, list]:
    """Positive and negative terms: raw vectors among keys, on either side."""
    a, b, c = keys(3)
    vector, other = raw_vector(rng, width), raw_vector(rng, width)
    return [
        ([b, vector], [a]),
        ([vector], [a, c]),
        ([b, c], [other]),
        ([vector, c], [a, other]),
    ][query % 4]


def pole(negative: list) -> bool:
    """Whether a negative raw vector's factor can cross 0 (its norm is above 1)."""
    return any(isinstance(t, np.ndarray) and np.linalg.norm(t) > 1 for t in negative)


def test_most_similar_cosmul_with_raw_vectors_of_any_norm(
    pair: Pair, request: pytest.FixtureRequest
) -> None:
    local, remote = pair
    exact = exact_copy(request.node.callspec.id, local)
    keys = draw(local, 18)
    rng = np.random.default_rng(18)
    for query in range(QUERIES):
        positive, negative = cosmul_terms(query, keys, rng, local.vector_size)
        oracle = exact if pole(negative) else local
        deeper = oracle.most_similar_cosmul(positive, negative, topn=TOPN + 5)
        answer = remote.most_similar_cosmul(positive, negative, topn=TOPN)
        assert_same_ranking(answer, deeper[:TOPN], deeper, rtol=SCORE_TOLERANCE)
        if query % 5 == 0:  # every row's objective
            every = remote.most_similar_cosmul(positive, negative, topn=None)
            expected = oracle.most_similar_cosmul(positive, negative, topn=None)
            assert_same_scores(every, expected.astype(np.float32), rtol=SCORE_TOLERANCE)

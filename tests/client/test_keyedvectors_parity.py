"""RemoteKeyedVectors against gensim's KeyedVectors on the same table files: the same calls,
hundreds of seeded queries of each method, the same keys and scores within 1e-5, and gensim's
exceptions where gensim raises them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from gensim.models import KeyedVectors

from tests.client.parity import (
    QUERIES,
    SCORE_TOLERANCE,
    TIE,
    TOPN,
    Pair,
    assert_same_keys_up_to_ties,
    assert_same_ranking,
    assert_same_scores,
    draw,
)

pytestmark = pytest.mark.slow


def test_the_table_is_the_same(pair: Pair) -> None:
    local, remote = pair
    assert len(remote) == len(local) and remote.vector_size == local.vector_size
    stop = min(len(local), 5000)
    assert remote.index_to_key[:stop] == local.index_to_key[:stop]
    assert remote.index_to_key[-3:] == local.index_to_key[-3:]
    keys = draw(local, 1)(min(QUERIES, len(local)))
    assert [remote.key_to_index[k] for k in keys] == [local.key_to_index[k] for k in keys]
    np.testing.assert_array_equal(remote[keys], local[keys])
    for key in keys[:20]:
        np.testing.assert_array_equal(remote.get_vector(key), local.get_vector(key))
        np.testing.assert_allclose(
            remote.get_vector(key, norm=True), local.get_vector(key, norm=True), atol=1e-6
        )
    np.testing.assert_array_equal(remote[[3, 0]], local[[3, 0]])
    for key in [*keys[:20], "no-such-key", "", "KEY" * 100, 0, len(local) - 1, len(local), -1]:
        assert (key in remote) == (key in local), key


def test_most_similar_of_one_key(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 2)
    for _ in range(QUERIES):
        [key] = keys(1)
        deeper = local.most_similar(key, topn=TOPN + 5)
        assert_same_ranking(remote.most_similar(key, topn=TOPN), deeper[:TOPN], deeper)
        assert remote.similar_by_word(key, topn=3) == remote.most_similar(key, topn=3)


def test_most_similar_analogies_weights_vectors_and_row_numbers(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 3)
    rng = np.random.default_rng(3)
    for query in range(QUERIES):
        a, b, c = keys(3)
        positive: list[Any] = [b, c]
        negative: list[Any] = [a]
        if query % 4 == 1:
            positive, negative = [(b, 2.0), c], [(a, -0.5)]
        elif query % 4 == 2:
            positive = [b, local[c] * float(rng.uniform(0.5, 2))]
        elif query % 4 == 3:
            positive, negative = [local.key_to_index[b], c], [(a, 0.25)]  # 0.25 counts positively
        deeper = local.most_similar(positive, negative, topn=TOPN + 5)
        remote_answer = remote.most_similar(positive, negative, topn=TOPN)
        assert_same_ranking(remote_answer, deeper[:TOPN], deeper)


def test_most_similar_within_restrict_vocab(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 4)
    restrict = max(len(local) // 3, 20)
    for _ in range(QUERIES):
        a, b, c = keys(3)
        deeper = local.most_similar([b, c], [a], topn=TOPN + 5, restrict_vocab=restrict)
        answer = remote.most_similar([b, c], [a], topn=TOPN, restrict_vocab=restrict)
        assert_same_ranking(answer, deeper[:TOPN], deeper)
        assert all(remote.key_to_index[key] < restrict for key, _ in answer)


def test_similar_by_vector(pair: Pair) -> None:
    local, remote = pair
    rng = np.random.default_rng(5)
    for _ in range(QUERIES):
        vector = rng.normal(size=local.vector_size).astype(np.float32)
        deeper = local.similar_by_vector(vector, topn=TOPN + 5)
        assert_same_ranking(remote.similar_by_vector(vector, topn=TOPN), deeper[:TOPN], deeper)


def cosmul_queries(local: KeyedVectors, seed: int) -> Iterator[tuple[list[Any], list[str]]]:
    """Seeded 3CosMul queries (positive, negative terms), every other one with a unit vector
    among its positive terms."""
    keys = draw(local, seed)
    for query in range(QUERIES):
        a, b, c = keys(3)
        yield ([b, c] if query % 2 else [b, local.get_vector(c, norm=True)]), [a]


def test_most_similar_cosmul(pair: Pair) -> None:
    local, remote = pair
    for positive, negative in cosmul_queries(local, 6):
        deeper = local.most_similar_cosmul(positive, negative, topn=TOPN + 5, restrict_vocab=3)
        answer = remote.most_similar_cosmul(positive, negative, topn=TOPN, restrict_vocab=3)
        assert_same_ranking(answer, deeper[:TOPN], deeper)  # restrict_vocab: ignored by both


def test_similarity_distance_and_n_similarity(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 7)
    for _ in range(QUERIES):
        a, b, c, d, e = keys(5)
        assert remote.similarity(a, b) == pytest.approx(local.similarity(a, b), abs=SCORE_TOLERANCE)
        assert remote.distance(a, c) == pytest.approx(local.distance(a, c), abs=SCORE_TOLERANCE)
        first, second = [a, b, "no-such-key"], [c, d, e]
        expected = local.n_similarity(first, second)
        assert remote.n_similarity(first, second) == pytest.approx(expected, abs=SCORE_TOLERANCE)


def test_distances_to_given_keys_from_a_key_or_a_vector(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 8)
    rng = np.random.default_rng(8)
    for query in range(QUERIES):
        [key, *others] = keys(min(21, len(local)))
        source: Any = key if query % 2 else rng.normal(size=local.vector_size).astype(np.float32)
        np.testing.assert_allclose(
            remote.distances(source, others), local.distances(source, others), atol=SCORE_TOLERANCE
        )


def test_doesnt_match(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 9)
    for _ in range(QUERIES):
        words = [*keys(4), "no-such-key"]
        ranked = local.rank_by_centrality(words)
        expected = ranked[-1][1]
        answer = remote.doesnt_match(words)
        if answer != expected:  # only a tie between the two least central may differ
            assert abs(ranked[-1][0] - ranked[-2][0]) < 1e-6 and answer == ranked[-2][1]


def test_rank_and_closer_than_near_and_far(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 10)
    rng = np.random.default_rng(10)
    depth = min(50, len(local) - 1)
    for query in range(QUERIES):
        [key, anywhere] = keys(2)
        near = local.most_similar(key, topn=depth)[int(rng.integers(depth))][0]
        other = near if query % 2 else anywhere  # anywhere: mostly far past max_k
        distances = local.distances(key)
        bound = distances[local.key_to_index[other]]
        expected = local.closer_than(key, other)
        answer = remote.closer_than(key, other)
        distance_of = {k: distances[local.key_to_index[k]] for k in {*answer, *expected}}
        assert_same_keys_up_to_ties(answer, expected, distance_of, bound)
        ties = int(np.sum(np.abs(distances - bound) < TIE))
        assert abs(remote.rank(key, other) - local.rank(key, other)) <= ties
        assert remote.rank(key, other) == len(answer) + 1


def test_every_row_s_cosine_to_a_key_an_analogy_or_a_clip_range(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 13)
    rng = np.random.default_rng(13)
    rows = len(local)
    for query in range(QUERIES):
        a, b, c = keys(3)
        calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
            ("most_similar", (a,), {}),
            ("similar_by_word", (b,), {"restrict_vocab": max(rows // 3, 1)}),
            ("most_similar", ([(b, 2.0), c], [a]), {}),
            ("most_similar", ([b, local[c]], [a]), {"clip_end": rows // 2}),
        ]
        if query % 8 == 0:  # gensim's clip_start (no top-n search can take it)
            calls.append(("most_similar", (a,), {"clip_start": int(rng.integers(rows))}))
        for method, args, kwargs in calls:
            answer = getattr(remote, method)(*args, topn=None, **kwargs)
            assert_same_scores(answer, getattr(local, method)(*args, topn=None, **kwargs))


def test_every_row_s_cosine_to_a_vector(pair: Pair) -> None:
    local, remote = pair
    rng = np.random.default_rng(14)
    for _ in range(QUERIES):
        vector = rng.normal(size=local.vector_size).astype(np.float32)
        assert_same_scores(
            remote.similar_by_vector(vector, topn=None), local.similar_by_vector(vector, topn=None)
        )


def test_every_row_s_3cosmul_objective(pair: Pair) -> None:
    local, remote = pair
    for positive, negative in cosmul_queries(local, 15):
        answer = remote.most_similar_cosmul(positive, negative, topn=None)
        expected = local.most_similar_cosmul(positive, negative, topn=None)
        assert_same_scores(answer, expected, rtol=SCORE_TOLERANCE)


def test_distances_to_every_row_from_a_key_or_a_vector(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 16)
    rng = np.random.default_rng(16)
    for query in range(QUERIES):
        [key] = keys(1)
        source: Any = key if query % 2 else rng.normal(size=local.vector_size).astype(np.float32)
        if query % 4 == 1:
            source = local.key_to_index[key]  # a row number, as gensim takes it
        assert_same_scores(remote.distances(source), local.distances(source))


def test_unknown_keys_are_keyerrors_as_in_gensim(pair: Pair) -> None:
    local, remote = pair
    known = local.index_to_key[0]
    calls: list[Callable[[Any], Any]] = [
        lambda kv: kv["no-such-key"],
        lambda kv: kv.get_vector("no-such-key"),
        lambda kv: kv[[known, "no-such-key"]],
        lambda kv: kv.most_similar(["no-such-key"]),
        lambda kv: kv.most_similar([known], ["no-such-key"]),
        lambda kv: kv.most_similar_cosmul(["no-such-key"]),
        lambda kv: kv.similarity(known, "no-such-key"),
        lambda kv: kv.distances(known, ["no-such-key"]),
        lambda kv: kv.rank(known, "no-such-key"),
        lambda kv: kv.rank("no-such-key", known),
        lambda kv: kv.closer_than(known, "no-such-key"),
        lambda kv: kv.closer_than("no-such-key", known),
        lambda kv: kv.distances("no-such-key"),
        lambda kv: kv.distances(len(kv)),
        lambda kv: kv.most_similar(["no-such-key"], topn=None),
        lambda kv: kv.most_similar_cosmul([known], ["no-such-key"], topn=None),
        lambda kv: kv.get_index(len(kv)),
    ]
    for call in calls:
        for kv in (local, remote):
            with pytest.raises(KeyError):
                call(kv)
    for kv in (local, remote):
        with pytest.raises(ValueError):
            kv.doesnt_match(["no-such-key"])
        with pytest.raises(ZeroDivisionError):
            kv.n_similarity([], [known])
        with pytest.raises(ValueError):
            kv.most_similar_cosmul(negative=[known], topn=None)
        assert kv.most_similar(known, topn=0) == []

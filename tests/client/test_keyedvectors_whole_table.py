"""RemoteKeyedVectors against gensim's KeyedVectors on the same table files, for what gensim
computes over the whole table (norms, unit rows, per-key attributes, save) and for the types
of every answer: the same Python and numpy types, float32 where gensim's are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gensim.models import KeyedVectors

from embedding_service.keyedvectors import RemoteKeyedVectors
from tests.client.parity import SCORE_TOLERANCE, Pair, draw

pytestmark = pytest.mark.slow

# Tables whose per-key attributes come from their files: a word2vec vocabulary file's counts,
# a projector's label columns, none for MiniLM. (gensim invents counts for a word2vec or GloVe
# file read without a vocabulary file; the server has none to give.)
ATTRIBUTE_TABLES = ["word2vec", "projector", "minilm"]


def assert_same_types(ours: Any, theirs: Any, where: str) -> None:
    """The same type all the way down: numpy arrays of the same dtype and shape, sequences of
    the same length holding the same types, scalars of the same class."""
    assert type(ours) is type(theirs), (where, type(ours), type(theirs))
    if isinstance(theirs, np.ndarray):
        assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), where
    elif isinstance(theirs, list | tuple):
        assert len(ours) == len(theirs), where
        for index, (mine, their) in enumerate(zip(ours, theirs, strict=True)):
            assert_same_types(mine, their, f"{where}[{index}]")


def calls(local: KeyedVectors, seed: int) -> dict[str, Callable[[Any], Any]]:
    """One call of every method gensim's KeyedVectors and RemoteKeyedVectors share."""
    a, b, c = draw(local, seed)(3)
    rng = np.random.default_rng(seed)
    vector32 = rng.normal(size=local.vector_size).astype(np.float32)
    vector64 = vector32.astype(np.float64)
    return {
        "similarity": lambda kv: kv.similarity(a, b),
        "distance": lambda kv: kv.distance(a, b),
        "n_similarity": lambda kv: kv.n_similarity([a, b], [c]),
        "most_similar": lambda kv: kv.most_similar(a, topn=3),
        "most_similar of weighted terms": lambda kv: kv.most_similar([(a, 2.0), b], [c], topn=3),
        "most_similar, every row": lambda kv: kv.most_similar([a, b], [c], topn=None),
        "most_similar_cosmul": lambda kv: kv.most_similar_cosmul([a, b], [c], topn=3),
        "most_similar_cosmul, every row": lambda kv: kv.most_similar_cosmul([a], [b], topn=None),
        "most_similar_cosmul, no negative": lambda kv: kv.most_similar_cosmul([a], topn=None),
        "most_similar_cosmul of a float64 vector": lambda kv: kv.most_similar_cosmul(
            [vector64], [b], topn=None
        ),
        "similar_by_word": lambda kv: kv.similar_by_word(a, topn=2),
        "similar_by_key": lambda kv: kv.similar_by_key(a, topn=2),
        "similar_by_vector": lambda kv: kv.similar_by_vector(vector32, topn=2),
        "similar_by_vector, every row": lambda kv: kv.similar_by_vector(vector64, topn=None),
        "rank_by_centrality": lambda kv: kv.rank_by_centrality([a, b, c]),
        "doesnt_match": lambda kv: kv.doesnt_match([a, b, c]),
        "most_similar_to_given": lambda kv: kv.most_similar_to_given(a, [b, c]),
        "distances from a key": lambda kv: kv.distances(a),
        "distances to keys": lambda kv: kv.distances(a, [b, c]),
        "distances from a float32 vector": lambda kv: kv.distances(vector32),
        "distances from a float64 vector": lambda kv: kv.distances(vector64),
        "distances from a float64 vector to keys": lambda kv: kv.distances(vector64, [b]),
        "rank": lambda kv: kv.rank(a, b),
        "closer_than": lambda kv: kv.closer_than(a, local.most_similar(a, topn=3)[-1][0]),
        "get_vector": lambda kv: kv.get_vector(a),
        "get_vector, unit": lambda kv: kv.get_vector(a, norm=True),
        "[key]": lambda kv: kv[a],
        "[keys]": lambda kv: kv[[a, b]],
        "get_mean_vector": lambda kv: kv.get_mean_vector([a, vector64]),
        "get_index": lambda kv: kv.get_index(a),
        "has_index_for": lambda kv: kv.has_index_for(a),
        "key_to_index": lambda kv: kv.key_to_index[a],
        "index_to_key": lambda kv: kv.index_to_key[1],
        "len": len,
        "vector_size": lambda kv: kv.vector_size,
    }


def test_every_answer_has_gensim_s_types(pair: Pair) -> None:
    local, remote = pair
    for seed in range(3):
        for name, call in calls(local, seed).items():
            assert_same_types(call(remote), call(local), name)


def test_similarities_are_float32_within_its_rounding_of_gensim_s(pair: Pair) -> None:
    local, remote = pair
    keys = draw(local, 21)
    for _ in range(50):
        a, b, c, d = keys(4)
        for method, args in (("similarity", (a, b)), ("distance", (c, d))):
            ours, theirs = getattr(remote, method)(*args), getattr(local, method)(*args)
            assert type(ours) is type(theirs) is np.float32
            assert ours == pytest.approx(theirs, abs=1e-6), (method, args)
        ours, theirs = remote.n_similarity([a, b], [c, d]), local.n_similarity([a, b], [c, d])
        assert type(ours) is type(theirs) and ours == pytest.approx(theirs, abs=1e-6)


def test_norms_are_filled_when_asked_as_gensim_fills_them(pair: Pair) -> None:
    local, shared = pair
    remote = RemoteKeyedVectors(shared.client, shared.table)
    assert remote.norms is None
    remote.fill_norms()
    local.fill_norms(force=True)
    assert remote.norms is not None and remote.norms.dtype == local.norms.dtype
    np.testing.assert_allclose(remote.norms, local.norms, rtol=1e-6)
    filled = remote.norms
    remote.fill_norms()
    assert remote.norms is filled  # kept, as gensim keeps them, unless forced
    remote.fill_norms(force=True)
    np.testing.assert_array_equal(remote.norms, filled)


def test_normed_vectors_are_gensim_s_exactly(pair: Pair) -> None:
    local, shared = pair
    remote = RemoteKeyedVectors(shared.client, shared.table)
    local.fill_norms(force=True)
    with np.errstate(invalid="ignore"):  # a zero row is 0 / 0 in both
        expected = local.get_normed_vectors()
        normed = remote.get_normed_vectors()
    assert normed.dtype == expected.dtype
    np.testing.assert_array_equal(normed, expected)
    assert remote.norms is not None
    np.testing.assert_array_equal(remote.norms, local.norms)


@pytest.mark.parametrize("name", ATTRIBUTE_TABLES)
def test_per_key_attributes_are_the_table_s_metadata(pairs: dict[str, Pair], name: str) -> None:
    local, remote = pairs[name]
    assert set(local.expandos) == set(remote.client.table(remote.table).metadata_columns)
    for key in draw(local, 22)(50):
        for attribute in local.expandos:
            ours, theirs = remote.get_vecattr(key, attribute), local.get_vecattr(key, attribute)
            assert ours == theirs and type(ours) is type(theirs), (key, attribute)
        for kv in (local, remote):
            with pytest.raises(KeyError):
                kv.get_vecattr(key, "no-such-attribute")
    for kv in (local, remote):
        with pytest.raises(KeyError):
            kv.get_vecattr("no-such-key", next(iter(local.expandos), "count"))


def test_words_closer_than_is_closer_than_deprecated(pair: Pair) -> None:
    local, remote = pair
    key = local.index_to_key[5]
    other = local.most_similar(key, topn=4)[-1][0]
    for kv in (local, remote):
        with pytest.deprecated_call(match="words_closer_than"):
            listed = kv.words_closer_than(key, other)
        assert listed == kv.closer_than(key, other)
    assert len(remote.words_closer_than.__doc__ or "") > 0


def test_save_writes_what_gensim_loads_equal(pair: Pair, tmp_path: Path) -> None:
    local, remote = pair
    path = tmp_path / "table.kv"
    remote.save(path)
    loaded = KeyedVectors.load(str(path))
    assert loaded.index_to_key == local.index_to_key
    assert loaded.key_to_index == local.key_to_index and loaded.vector_size == local.vector_size
    np.testing.assert_array_equal(loaded.vectors, local.vectors)
    assert loaded.vectors.dtype == local.vectors.dtype
    assert set(loaded.expandos) <= set(local.expandos)
    for attribute, column in loaded.expandos.items():
        assert column.dtype == local.expandos[attribute].dtype
        np.testing.assert_array_equal(column, local.expandos[attribute])
    key = local.index_to_key[3]
    theirs = local.most_similar(key, topn=5)
    assert [k for k, _ in loaded.most_similar(key, topn=5)] == [k for k, _ in theirs]
    np.testing.assert_allclose(
        [s for _, s in loaded.most_similar(key, topn=5)],
        [s for _, s in theirs],
        atol=SCORE_TOLERANCE,
    )
    mapped = KeyedVectors.load(str(path), mmap="r")  # the rows beside it, memory-mapped
    np.testing.assert_array_equal(mapped.vectors, local.vectors)

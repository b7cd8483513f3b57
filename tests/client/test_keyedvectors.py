"""RemoteKeyedVectors beyond parity: what it refuses (and why), ranks far past max_k, scores
of every row in the pages the server allows, zero rows as gensim has them, how lazily it pages
the vocabulary, and keys that only the case-insensitive fallback would match."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from gensim.models import KeyedVectors

from benchmarks.server import running_server
from embedding_service import Client
from embedding_service.keyedvectors import RemoteKeyedVectors
from tests.client.helpers import Recorder, minilm_rows, minilm_table
from tests.conftest import SMALL_TOKENS, SMALL_WIDTH, small_vectors

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm(served: str) -> RemoteKeyedVectors:
    return RemoteKeyedVectors(served, "minilm")


def test_what_the_service_cannot_express_is_refused(minilm: RemoteKeyedVectors) -> None:
    with pytest.raises(NotImplementedError, match="positive"):
        minilm.most_similar(negative=["king"])
    with pytest.raises(NotImplementedError, match="norm"):
        minilm.most_similar_cosmul([minilm["king"]])  # a raw row: its norm is not 1
    with pytest.raises(NotImplementedError, match="clip_start"):
        minilm.most_similar("king", clip_start=10)
    with pytest.raises(NotImplementedError, match="dummy4unknown"):
        minilm.evaluate_word_pairs("unused.tsv", dummy4unknown=True)
    with pytest.raises(AttributeError, match="server"):
        _ = minilm.vectors


def test_ranks_beyond_the_deepest_neighbour_list(minilm: RemoteKeyedVectors) -> None:
    tokens, _ = minilm_rows()
    sample = [tokens[int(i)] for i in np.random.default_rng(12).choice(len(tokens), 2000)]
    farthest = sample[int(np.argmax(minilm.distances("king", sample)))]  # in the last 0.1%
    distances = minilm.distances("king")
    bound = distances[tokens.index(farthest)]
    assert minilm.rank("king", farthest) > 29_000  # far past max_k (1,000)
    closer = minilm.closer_than("king", farthest)  # pages of max_results rows
    assert len(closer) == minilm.rank("king", farthest) - 1
    assert closer == [t for i, t in enumerate(tokens) if distances[i] < bound and t != "king"]
    assert minilm.rank("king", "kings") == 1 and minilm.closer_than("king", "kings") == []
    assert minilm.rank(2332, 5465) == 1  # row numbers, as gensim takes them


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteKeyedVectors]:
    """MiniLM from a server whose pages of scores hold 5,000 rows (3CosMul: a third)."""
    env = {"EMBEDDING_SERVICE_TABLES": json.dumps([minilm_table()]),
           "EMBEDDING_SERVICE_MAX_COSINE_ROWS": "5000"}  # fmt: skip
    with running_server(env) as base:
        yield RemoteKeyedVectors(base, "minilm")


def test_every_score_comes_in_pages_the_server_allows(
    paged: RemoteKeyedVectors, minilm: RemoteKeyedVectors
) -> None:
    statuses: list[int] = []

    def record(response: httpx.Response) -> None:
        if response.request.url.path.endswith("/cosines"):
            statuses.append(response.status_code)

    paged.client._http.event_hooks["response"].append(record)
    scores = paged.most_similar("king", topn=None)
    assert statuses == [422] + [200] * 7  # all rows refused, then pages of 5,000
    assert scores.tobytes() == minilm.most_similar("king", topn=None).tobytes()
    statuses.clear()
    objective = paged.most_similar_cosmul(["king", "woman"], ["man"], topn=None)
    assert statuses == [422] + [200] * 19  # three directions: pages of 1,666
    expected = minilm.most_similar_cosmul(["king", "woman"], ["man"], topn=None)
    assert objective.tobytes() == expected.tobytes()
    first = paged.most_similar("king", topn=None, restrict_vocab=4000)
    assert first.tobytes() == scores[:4000].tobytes()


def test_zero_rows_answer_as_in_gensim(served: str) -> None:
    local = KeyedVectors(SMALL_WIDTH)
    local.add_vectors(SMALL_TOKENS, small_vectors())
    remote = RemoteKeyedVectors(served, "small")  # row 0, [PAD], is all zeros
    with np.errstate(divide="ignore", invalid="ignore"):
        for key in ("king", "[PAD]"):
            expected = local.distances(key)
            np.testing.assert_allclose(remote.distances(key), expected, atol=1e-6)
            assert np.isnan(remote.distances(key)).tolist() == np.isnan(expected).tolist()
        np.testing.assert_allclose(
            remote.most_similar("king", topn=None), local.most_similar("king", topn=None),
            atol=1e-6,
        )  # fmt: skip
        zero = np.zeros(SMALL_WIDTH, np.float32)
        assert np.isnan(remote.distances(zero)).all() and np.isnan(local.distances(zero)).all()
        for first, second in [("king", "[PAD]"), ("[PAD]", "king"), ("king", "pear")]:
            assert remote.rank(first, second) == local.rank(first, second)
            assert remote.closer_than(first, second) == local.closer_than(first, second)


def test_the_vocabulary_is_paged_in_only_as_it_is_read(served: str) -> None:
    recorder = Recorder()
    client = Client(served, http_options=recorder.hooks())
    kv = RemoteKeyedVectors(client, "minilm")
    assert len(recorder.statuses) == 1  # the table's facts only
    assert kv.key_to_index["king"] == 2332 and kv.key_to_index.get("no-such-key") is None
    assert len(recorder.statuses) == 4  # the limits, one lookup each (the unknown: a 404)
    assert kv.key_to_index["king"] == 2332 and "king" in kv
    assert len(recorder.statuses) == 4  # remembered
    tokens, _ = minilm_rows()
    assert kv.index_to_key[2332] == "king"
    assert len(recorder.statuses) == 4 + 16  # one page: 4,096 ids in chunks of 256
    assert kv.index_to_key[4095] == tokens[4095] and kv.index_to_key[:10] == tokens[:10]
    assert len(recorder.statuses) == 4 + 16
    assert kv.index_to_key[-1] == tokens[-1] and len(kv.index_to_key) == len(tokens)


def test_a_match_only_the_case_fallback_finds_is_not_a_key(served: str) -> None:
    small = RemoteKeyedVectors(served, "small")  # served case-insensitive: KING -> King
    assert "King" in small and "king" in small and "KING" not in small
    for call in (
        lambda: small["KING"],
        lambda: small.most_similar("KING"),
        lambda: small.similarity("KING", "queen"),
    ):
        with pytest.raises(KeyError, match="KING"):
            call()
    assert small.most_similar("King", topn=1)[0][0] != "King"


def test_a_shared_client_and_an_api_key_reach_the_same_table(served: str) -> None:
    shared = Client(served)
    first, second = RemoteKeyedVectors(shared, "minilm"), RemoteKeyedVectors(served, "minilm")
    assert first.client is shared
    assert first.most_similar("king", topn=3) == second.most_similar("king", topn=3)
    assert repr(first) == f"<RemoteKeyedVectors 'minilm' at {served}: 30522 keys>"

"""RemoteKeyedVectors beyond parity: what it refuses (and why), how lazily it pages the
vocabulary, and keys that only the case-insensitive fallback would match."""

from __future__ import annotations

import numpy as np
import pytest

from embedding_service import Client
from embedding_service.keyedvectors import RemoteKeyedVectors
from tests.client.helpers import Recorder, minilm_rows

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm(served: str) -> RemoteKeyedVectors:
    return RemoteKeyedVectors(served, "minilm")


def test_what_needs_a_score_for_every_row_is_refused_naming_the_endpoint(
    minilm: RemoteKeyedVectors,
) -> None:
    for call in (
        lambda: minilm.most_similar("king", topn=None),
        lambda: minilm.most_similar_cosmul("king", topn=None),
        lambda: minilm.similar_by_vector(minilm["king"], topn=None),
        lambda: minilm.distances("king"),
    ):
        with pytest.raises(NotImplementedError, match=r"cosines"):
            call()


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


def test_a_rank_beyond_the_deepest_neighbour_list_is_refused(minilm: RemoteKeyedVectors) -> None:
    tokens, _ = minilm_rows()
    sample = [tokens[int(i)] for i in np.random.default_rng(12).choice(len(tokens), 2000)]
    farthest = sample[int(np.argmax(minilm.distances("king", sample)))]  # in the last 0.1%
    with pytest.raises(NotImplementedError, match="rank"):
        minilm.rank("king", farthest)
    assert minilm.rank("king", "kings") == 1 and minilm.closer_than("king", "kings") == []


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

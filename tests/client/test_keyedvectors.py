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

from embedding_service import Client
from embedding_service.errors import ZeroVector
from embedding_service.keyedvectors import RemoteKeyedVectors
from harness.server import running_server
from tests.client.helpers import Recorder, minilm_rows, minilm_table
from tests.conftest import SMALL_TOKENS, SMALL_WIDTH, small_vectors

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm(served: str) -> RemoteKeyedVectors:
    return RemoteKeyedVectors(served, "minilm")


def test_what_the_service_cannot_express_is_refused(minilm: RemoteKeyedVectors) -> None:
    with pytest.raises(NotImplementedError, match="clip_start"):
        minilm.most_similar("king", clip_start=10)
    with pytest.raises(NotImplementedError, match="indexer"):
        minilm.most_similar("king", indexer=object())
    with pytest.raises(AttributeError, match="server"):
        _ = minilm.vectors


@pytest.fixture(scope="module")
def gensim_minilm() -> KeyedVectors:
    tokens, rows = minilm_rows()
    keyed = KeyedVectors(rows.shape[1])
    keyed.add_vectors(tokens, rows)
    return keyed


def test_what_once_needed_the_server_is_gensim_s_answer(
    minilm: RemoteKeyedVectors, gensim_minilm: KeyedVectors, tmp_path
) -> None:
    # Negative terms alone; a raw row in 3CosMul (its norm is not 1); unknown pairs as 0.
    for call in (
        lambda kv: kv.most_similar(negative=["king"], topn=5),
        lambda kv: kv.most_similar(negative=["king", ("queen", 0.5)], topn=None)[:2000],
        lambda kv: kv.most_similar_cosmul([kv["king"]], ["queen"], topn=5),
        lambda kv: kv.most_similar_cosmul(["paris", kv["france"] * 3], topn=None)[:2000],
    ):
        ours, theirs = call(minilm), call(gensim_minilm)
        if isinstance(theirs, np.ndarray):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
        else:
            assert [key for key, _ in ours] == [key for key, _ in theirs]
            np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], rtol=1e-5)
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("king\tqueen\t9\nman\twoman\t8\napple\tking\t1\nqqzx\tking\t2\n")
    ours, theirs = (
        kv.evaluate_word_pairs(pairs, dummy4unknown=True) for kv in (minilm, gensim_minilm)
    )
    assert ours[0].statistic == pytest.approx(theirs[0].statistic, abs=1e-6)
    assert ours[2] == pytest.approx(theirs[2]) == 25.0


def test_terms_without_weight_have_no_mean(minilm: RemoteKeyedVectors) -> None:
    with pytest.raises(ValueError, match="no input"):  # gensim's ValueError
        minilm.most_similar(positive=[], negative=[])
    with pytest.raises(ZeroVector):  # gensim: a mean of 0, every cosine 0
        minilm.most_similar([("king", 0.0)])


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
    """MiniLM from a server of small limits: pages of scores of 5,000 rows (3CosMul: a third),
    evaluations of 40 questions, bodies (and answers listing questions) of 1,536 bytes."""
    env = {"EMBEDDING_SERVICE_TABLES": json.dumps([minilm_table()]),
           "EMBEDDING_SERVICE_MAX_COSINE_ROWS": "5000",
           "EMBEDDING_SERVICE_MAX_EVALUATION_QUESTIONS": "40",
           "EMBEDDING_SERVICE_MAX_BODY_BYTES": "1536"}  # fmt: skip
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


def test_analogy_evaluation_comes_in_chunks_the_server_allows(
    paged: RemoteKeyedVectors, gensim_minilm: KeyedVectors, tmp_path
) -> None:
    questions = tmp_path / "questions.txt"  # 3 sections, 100 questions; one section empty
    words = ["king", "queen", "man", "woman", "paris", "france", "berlin", "germany", "qqzx"]
    rng = np.random.default_rng(6)
    lines = [": first", *(" ".join(rng.choice(words, 4)) for _ in range(70)), ": empty",
             ": last", *(" ".join(rng.choice(words, 4)) for _ in range(30))]  # fmt: skip
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    statuses = Recorder()
    paged.client._http.event_hooks["response"].append(statuses)
    for dummy4unknown in (False, True):
        ours = paged.evaluate_word_analogies(questions, dummy4unknown=dummy4unknown)
        assert ours == gensim_minilm.evaluate_word_analogies(questions, dummy4unknown=dummy4unknown)
        # Refused for its body (413), its questions or its answer's bytes (422), then answered.
        assert {413, 422, 200} == set(statuses.statuses)
        assert statuses.statuses.count(200) >= 3  # 100 questions: chunks of at most 40
        statuses.statuses.clear()


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

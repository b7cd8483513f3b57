"""Queries at a checkpoint: the named version of a checkpoint set answers as a table would."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.engine.search.cosine import CosineSearch
from service.engine.session import Session
from service.engine.tables.table import EmbeddingTable
from tests.checkpoint_sets import synthetic_rows

RUN = "/v1/tables/run"
TOKENS, _, ROWS = synthetic_rows()


def same(answer: list[dict], expected: list[tuple[str, float]]) -> bool:
    """The answer's tokens, and scores equal to gensim-semantics' within rounding."""
    tokens = [n["token"] for n in answer]
    scores = [n["score"] for n in answer]
    return tokens == [t for t, _ in expected] and scores == pytest.approx([s for _, s in expected])


def session_at(checkpoint: int) -> Session:
    table = EmbeddingTable(TOKENS, ROWS[checkpoint])
    return Session(table, CosineSearch(table))


@pytest.mark.parametrize("checkpoint", [0, 2, 4, None])
def test_neighbours_at_a_checkpoint_are_that_versions(client: TestClient, checkpoint) -> None:
    body = {"token": "w3", "k": 5} | ({} if checkpoint is None else {"checkpoint": checkpoint})
    answer = client.post(f"{RUN}/neighbors", json=body).json()["neighbors"]
    expected = session_at(4 if checkpoint is None else checkpoint).most_similar(["w3"], topn=5)
    assert same(answer, expected)


def test_batches_analogies_lookups_and_similarities_take_a_checkpoint(client: TestClient) -> None:
    batch = {"queries": [{"token": "w1", "k": 3}, {"token": "w9", "k": 2}], "checkpoint": 1}
    results = client.post(f"{RUN}/neighbors", json=batch).json()["results"]
    expected = session_at(1).most_similar(["w1"], topn=3)
    assert same(results[0]["neighbors"], expected)
    analogy = {"positive": ["w1", "w2"], "negative": ["w3"], "k": 3, "checkpoint": 0}
    answer = client.post(f"{RUN}/analogy", json=analogy).json()["neighbors"]
    expected = session_at(0).most_similar(["w1", "w2"], ["w3"], topn=3)
    assert same(answer, expected)
    items = client.post(f"{RUN}/lookup", json={"tokens": ["w7"], "checkpoint": 0}).json()["items"]
    np.testing.assert_array_equal(np.float32(items[0]["vector"]), ROWS[0][7])
    pairs = {"pairs": [["w1", "w2"]], "checkpoint": 3}
    score = client.post(f"{RUN}/similarity", json=pairs).json()["pairs"][0]["score"]
    assert score == pytest.approx(session_at(3).similarity("w1", "w2"))


def test_cached_answers_are_kept_apart_by_checkpoint(client: TestClient) -> None:
    first = client.post(f"{RUN}/neighbors", json={"token": "w5", "checkpoint": 1}).json()
    second = client.post(f"{RUN}/neighbors", json={"token": "w5", "checkpoint": 2}).json()
    again = client.post(f"{RUN}/neighbors", json={"token": "w5", "checkpoint": 1}).json()
    assert first == again != second


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("run/neighbors", {"token": "w1", "checkpoint": 5}),
        ("run/lookup", {"ids": [1], "checkpoint": 99}),
        ("small/neighbors", {"token": "king", "checkpoint": 1}),
    ],
)
def test_a_checkpoint_out_of_range_is_404_naming_the_count(client, path, body) -> None:
    response = client.post(f"/v1/tables/{path}", json=body)
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["type"] == "UnknownCheckpoint"
    assert error["checkpoints"] == (1 if path.startswith("small") else 5)


def test_checkpoint_zero_of_a_plain_table_is_the_table(client: TestClient) -> None:
    plain = client.post("/v1/tables/small/neighbors", json={"token": "king", "k": 2}).json()
    at_zero = client.post(
        "/v1/tables/small/neighbors", json={"token": "king", "k": 2, "checkpoint": 0}
    ).json()
    assert plain == at_zero

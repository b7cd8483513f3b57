"""Every query endpoint through the real app (TestClient runs the lifespan, tables load)."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.engine.tables.table import EmbeddingTable

MINILM = "/v1/tables/minilm"
SMALL = "/v1/tables/small"


def neighbors_of(response_json: dict) -> list[tuple[str, float]]:
    return [(n["token"], round(n["score"], 3)) for n in response_json["neighbors"]]


def test_neighbors_of_king(client: TestClient) -> None:
    response = client.post(f"{MINILM}/neighbors", json={"token": "king", "k": 2})
    assert response.status_code == 200
    assert neighbors_of(response.json()) == [("kings", 0.690), ("queen", 0.627)]


def test_neighbors_default_k_and_by_id(client: TestClient, minilm: EmbeddingTable) -> None:
    by_token = client.post(f"{MINILM}/neighbors", json={"token": "king"}).json()
    by_id = client.post(f"{MINILM}/neighbors", json={"id": minilm.token_to_id["king"]}).json()
    assert len(by_token["neighbors"]) == 10
    assert [n["id"] for n in by_token["neighbors"]] == [n["id"] for n in by_id["neighbors"]]
    assert "king" not in [n["token"] for n in by_token["neighbors"]]


def test_neighbors_of_a_raw_vector_include_its_own_row(client, minilm: EmbeddingTable) -> None:
    vector = minilm.vectors[minilm.token_to_id["queen"]].tolist()
    response = client.post(f"{MINILM}/neighbors", json={"vector": vector, "k": 1}).json()
    assert response["neighbors"][0]["token"] == "queen"
    assert response["neighbors"][0]["score"] == pytest.approx(1.0, abs=1e-6)


def test_neighbors_exclude_and_restrict(client: TestClient) -> None:
    plain = client.post(f"{MINILM}/neighbors", json={"token": "king", "k": 3}).json()
    excluded = client.post(
        f"{MINILM}/neighbors", json={"token": "king", "k": 2, "exclude": ["kings"]}
    ).json()
    assert [n["token"] for n in excluded["neighbors"]] == [
        n["token"] for n in plain["neighbors"][1:]
    ]
    restricted = client.post(
        f"{MINILM}/neighbors", json={"token": "king", "k": 5, "restrict": 3000}
    ).json()
    assert all(n["id"] < 3000 for n in restricted["neighbors"])


def test_neighbors_batch_equals_single_queries(client: TestClient) -> None:
    queries = [{"token": "king", "k": 3}, {"token": "apple", "k": 4}, {"id": 2000}]
    batch = client.post(f"{MINILM}/neighbors", json={"queries": queries})
    assert batch.status_code == 200
    singles = [client.post(f"{MINILM}/neighbors", json=q).json() for q in queries]
    for got, single in zip(batch.json()["results"], singles, strict=True):
        assert [n["id"] for n in got["neighbors"]] == [n["id"] for n in single["neighbors"]]
        np.testing.assert_allclose(
            [n["score"] for n in got["neighbors"]],
            [n["score"] for n in single["neighbors"]],
            atol=1e-6,
        )


def test_analogy_add_and_mul(client: TestClient) -> None:
    body = {"positive": ["king", "woman"], "negative": ["man"], "k": 3}
    added = client.post(f"{MINILM}/analogy", json=body).json()
    assert neighbors_of(added)[0] == ("queen", 0.502)
    multiplied = client.post(f"{MINILM}/analogy", json={**body, "method": "mul"}).json()
    assert multiplied["neighbors"][0]["token"] == "queen"
    for answer in (added, multiplied):
        assert not {"king", "woman", "man"} & {n["token"] for n in answer["neighbors"]}
    capital = client.post(
        f"{MINILM}/analogy", json={"positive": ["paris", "germany"], "negative": ["france"], "k": 1}
    ).json()
    assert capital["neighbors"][0]["token"] == "berlin"


def test_analogy_weighted_terms_and_batch(client: TestClient) -> None:
    weighted = {
        "positive": [{"token": "king", "weight": 1.0}, {"token": "woman", "weight": 1.0}],
        "negative": [{"token": "man", "weight": 1.0}],
        "k": 3,
    }
    plain = {"positive": ["king", "woman"], "negative": ["man"], "k": 3}
    batch = client.post(f"{MINILM}/analogy", json={"queries": [weighted, plain]}).json()
    first, second = batch["results"]
    assert [n["token"] for n in first["neighbors"]] == [n["token"] for n in second["neighbors"]]
    heavier = {**weighted, "negative": [{"token": "man", "weight": 3.0}]}
    answer = client.post(f"{MINILM}/analogy", json=heavier).json()
    assert answer["neighbors"] != first["neighbors"]


def test_similarity_pairs_and_matrix(client: TestClient) -> None:
    pairs = client.post(f"{MINILM}/similarity", json={"pairs": [["king", "queen"]]}).json()
    assert pairs["pairs"][0]["tokens"] == ["king", "queen"]
    assert round(pairs["pairs"][0]["score"], 3) == 0.627
    matrix = client.post(f"{MINILM}/similarity", json={"tokens": ["king", "queen", "apple"]}).json()
    grid = np.array(matrix["matrix"])
    assert grid.shape == (3, 3)
    np.testing.assert_allclose(grid, grid.T, atol=1e-6)
    np.testing.assert_allclose(np.diag(grid), 1.0, atol=1e-6)
    assert grid[0, 1] == pytest.approx(pairs["pairs"][0]["score"], abs=1e-6)


def test_lookup_by_tokens_and_ids(client: TestClient, minilm: EmbeddingTable) -> None:
    by_token = client.post(f"{MINILM}/lookup", json={"tokens": ["king", "queen"]}).json()
    king = minilm.token_to_id["king"]
    assert [item["id"] for item in by_token["items"]] == [king, minilm.token_to_id["queen"]]
    assert by_token["items"][0]["vector"] == minilm.vectors[king].tolist()
    assert by_token["items"][0]["norm"] == pytest.approx(
        float(np.linalg.norm(minilm.vectors[king]))
    )
    by_id = client.post(f"{MINILM}/lookup", json={"ids": [king], "include_vector": False}).json()
    assert by_id["items"][0]["token"] == "king"
    assert "vector" not in by_id["items"][0]


def test_score_is_a_tied_output_layer(client: TestClient, minilm: EmbeddingTable) -> None:
    vector = minilm.vectors[minilm.token_to_id["paris"]]
    body = {
        "vector": vector.tolist(),
        "k": 3,
        "softmax": True,
        "temperature": 0.5,
        "target": "queen",
    }
    answer = client.post(f"{MINILM}/score", json=body).json()
    logits = minilm.vectors.astype(np.float64) @ vector.astype(np.float64)
    assert [t["id"] for t in answer["top"]] == np.argsort(-logits)[:3].tolist()
    assert answer["top"][0]["token"] == "paris"
    probabilities = np.exp(logits / 0.5 - np.logaddexp.reduce(logits / 0.5))
    assert answer["top"][0]["probability"] == pytest.approx(probabilities.max(), rel=1e-4)
    queen = minilm.token_to_id["queen"]
    assert answer["target"]["rank"] == 1 + int((logits > logits[queen]).sum())
    assert answer["target"]["probability"] == pytest.approx(probabilities[queen], rel=1e-4)


def test_word_vectors_have_no_head_and_a_model_says_its_own(client: TestClient) -> None:
    """Plain word vectors were said to have a "tied" head: they have none (null), and /score
    scores their own rows; MiniLM, a model whose head is its input rows, stays "tied"."""
    for table, head in ((SMALL, None), (MINILM, "tied")):
        assert client.get(table).json()["head"] == head
        vector = client.post(f"{table}/lookup", json={"tokens": ["king"]}).json()["items"][0]
        answer = client.post(f"{table}/score", json={"vector": vector["vector"], "k": 1}).json()
        assert answer["head"] == head and len(answer["top"]) == 1


def test_score_takes_a_token_or_an_id_as_every_query_does(
    client: TestClient, minilm: EmbeddingTable
) -> None:
    """/score refused `token`: it scores the token's raw row, as the row's vector scores."""
    row = minilm.token_to_id["paris"]
    by_vector = client.post(f"{MINILM}/score", json={"vector": minilm.vectors[row].tolist()})
    for query in ({"token": "paris"}, {"id": row}):
        answer = client.post(f"{MINILM}/score", json=query)
        assert answer.status_code == 200, answer.text
        assert answer.json() == by_vector.json()
    queen = client.post(f"{SMALL}/lookup", json={"tokens": ["queen"]}).json()["items"][0]
    folded = client.post(f"{SMALL}/score", json={"token": "QUEEN"}).json()
    assert folded["matched"] == {"QUEEN": "queen"}  # the case fallback, as everywhere
    assert (
        folded["top"]
        == client.post(f"{SMALL}/score", json={"vector": queen["vector"]}).json()["top"]
    )
    unknown = client.post(f"{MINILM}/score", json={"token": "dragonfruitz"})
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "UnknownToken"
    both = client.post(f"{MINILM}/score", json={"token": "paris", "id": row})
    assert both.status_code == 422


def test_score_without_softmax_has_no_probabilities(client: TestClient) -> None:
    answer = client.post(f"{MINILM}/score", json={"vector": [0.1] * 384, "k": 2}).json()
    assert len(answer["top"]) == 2
    assert "probability" not in answer["top"][0]
    assert "log_partition" not in answer


def test_case_insensitive_fallback_reports_the_match(client: TestClient) -> None:
    answer = client.post(f"{SMALL}/neighbors", json={"token": "QUEEN", "k": 2}).json()
    assert answer["matched"] == {"QUEEN": "queen"}
    exact = client.post(f"{SMALL}/lookup", json={"tokens": ["king", "KING"]}).json()
    assert [item["token"] for item in exact["items"]] == ["king", "King"]
    assert exact["matched"] == {"KING": "King"}
    strict = client.post(f"{MINILM}/neighbors", json={"token": "KING"})
    assert strict.status_code == 404


def test_zero_rows_never_answer_and_cannot_be_queried(client: TestClient) -> None:
    answer = client.post(f"{SMALL}/neighbors", json={"token": "queen", "k": 50}).json()
    assert "[PAD]" not in [n["token"] for n in answer["neighbors"]]
    assert len(answer["neighbors"]) == 7  # nine rows minus the query and the zero row
    refused = client.post(f"{SMALL}/neighbors", json={"token": "[PAD]"})
    assert refused.status_code == 422
    assert refused.json()["error"]["type"] == "ZeroVector"
    pad = client.post(f"{SMALL}/similarity", json={"pairs": [["[PAD]", "queen"]]})
    assert pad.status_code == 422

"""/cosines and /rank through the real app: the neighbours' own scores for every row, pages of
them, ranks that count exactly, zero rows as the spec says, and clear refusals."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.engine.tables.table import EmbeddingTable
from service.schemas.ranking import CosinesResponse, RankResponse
from tests.conftest import SMALL_TOKENS, AppOf
from tests.robustness.conftest import assert_envelope

MINILM = "/v1/tables/minilm"


def scores(answer: dict[str, Any]) -> np.ndarray:
    """The float32 scores of a /cosines answer."""
    return np.frombuffer(base64.b64decode(answer["scores_b64"]), dtype="<f4")


def cosines(client: TestClient, body: dict[str, Any], table: str = MINILM) -> dict[str, Any]:
    response = client.post(f"{table}/cosines", json=body)
    assert response.status_code == 200, response.text
    CosinesResponse.model_validate(response.json())
    return response.json()


def rank(client: TestClient, body: dict[str, Any], table: str = MINILM) -> dict[str, Any]:
    response = client.post(f"{table}/rank", json=body)
    assert response.status_code == 200, response.text
    RankResponse.model_validate(response.json())
    return response.json()


def float64_cosines(table: EmbeddingTable, row: int) -> np.ndarray:
    """numpy's float64 cosines of every row with one row (the oracle)."""
    vectors = table.vectors.astype(np.float64)
    norms = np.sqrt(np.sum(vectors * vectors, axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return vectors @ vectors[row] / (norms * norms[row])


@pytest.mark.parametrize(
    ("cosine_body", "search", "search_body"),
    [
        ({"token": "king"}, "neighbors", {"token": "king", "k": 50}),
        ({"id": 3000}, "neighbors", {"id": 3000, "k": 50}),
        ({"text": "unbelievably", "pieces": "mean"}, "neighbors",
         {"text": "unbelievably", "pieces": "mean", "k": 50}),
        ({"positive": ["king", "woman"], "negative": ["man"]}, "analogy",
         {"positive": ["king", "woman"], "negative": ["man"], "k": 50}),
        ({"positive": ["paris", {"token": "germany", "weight": 2}], "negative": ["france"],
          "method": "mul"}, "analogy",
         {"positive": ["paris", {"token": "germany", "weight": 2}], "negative": ["france"],
          "method": "mul", "k": 50}),
        ({"negative": ["king", {"token": "paris", "weight": 2}]}, "analogy",
         {"negative": ["king", {"token": "paris", "weight": 2}], "k": 50}),
        ({"positive": ["paris", {"vector": [0.01] * 384}], "negative": [{"vector": [-0.2] * 384}],
          "method": "mul", "vector_terms": "as_given"}, "analogy",
         {"positive": ["paris", {"vector": [0.01] * 384}], "negative": [{"vector": [-0.2] * 384}],
          "method": "mul", "vector_terms": "as_given", "k": 50}),
    ],
)  # fmt: skip
def test_every_row_scores_what_the_search_reports(
    client: TestClient, cosine_body: dict, search: str, search_body: dict
) -> None:
    answer = cosines(client, cosine_body)
    assert (answer["rows"], answer["offset"], answer["count"]) == (30522, 0, 30522)
    found = client.post(f"{MINILM}/{search}", json=search_body).json()["neighbors"]
    every = scores(answer)
    for neighbor in found:
        assert every[neighbor["id"]] == np.float32(neighbor["score"])


def test_cosines_of_a_row_are_numpys_and_its_own_is_one(client, minilm) -> None:
    every = scores(cosines(client, {"token": "queen"}))
    queen = minilm.token_to_id["queen"]
    np.testing.assert_allclose(every, float64_cosines(minilm, queen), rtol=0, atol=1e-7)
    assert every[queen] == pytest.approx(1.0, abs=1e-7)


def test_pages_are_the_rows_of_the_whole(client: TestClient) -> None:
    whole = scores(cosines(client, {"token": "paris"}))
    for offset, limit in [(0, 1), (1000, 2000), (30000, 1000), (30522, 5), (40000, None)]:
        page = cosines(client, {"token": "paris", "offset": offset, "limit": limit})
        assert page["offset"] == offset and page["count"] == scores(page).size
        assert scores(page).tobytes() == whole[offset : offset + (limit or 30522)].tobytes()


def test_a_zero_row_scores_nan_and_a_zero_query_is_refused(client: TestClient) -> None:
    answer = cosines(client, {"token": "king"}, "/v1/tables/small")
    every = scores(answer)
    assert np.isnan(every[0]) and np.isfinite(every[1:]).all()  # [PAD] is all zeros
    assert every[SMALL_TOKENS.index("king")] == pytest.approx(1.0, abs=1e-7)
    refused = client.post("/v1/tables/small/cosines", json={"token": "[PAD]"})
    assert_envelope(refused, 422, "ZeroVector")


def test_the_case_fallback_is_reported(client: TestClient) -> None:
    assert cosines(client, {"token": "QUEEN"}, "/v1/tables/small")["matched"] == {"QUEEN": "queen"}


def test_max_cosine_rows_counts_rows_times_directions(app_of: AppOf) -> None:
    with app_of(max_cosine_rows=3000) as client:
        assert cosines(client, {"token": "king"})["count"] == 3000
        mul = {"positive": ["king", "woman"], "negative": ["man"], "method": "mul"}
        assert cosines(client, mul)["count"] == 1000  # three directions
        assert cosines(client, {**mul, "offset": 30000})["count"] == 522
        refused = client.post(f"{MINILM}/cosines", json={**mul, "limit": 1001})
        error = assert_envelope(refused, 422, "LimitExceeded")
        assert (error["limit"], error["got"]) == (3000, 3003)
        too_many = {"positive": ["king"] * 17}
        assert_envelope(client.post(f"{MINILM}/cosines", json=too_many), 422, "LimitExceeded")
        assert client.get("/v1/limits").json()["max_cosine_rows"] == 3000


def test_ranks_count_the_rows_above_beyond_max_k(client, minilm) -> None:
    king = minilm.token_to_id["king"]
    oracle = float64_cosines(minilm, king)
    others = ["queen", "paris", "banana", "the", "##ing", "king"]
    answer = rank(client, {"token": "king", "others": others})
    assert (answer["token"], answer["id"]) == ("king", king)
    for item, token in zip(answer["ranks"], others, strict=True):
        row = minilm.token_to_id[token]
        above = oracle > oracle[row]
        above[king] = False
        assert (item["token"], item["id"]) == (token, row)
        assert item["score"] == pytest.approx(oracle[row], abs=1e-12)
        assert abs(item["closer"] - np.count_nonzero(above)) <= np.count_nonzero(
            np.abs(oracle - oracle[row]) < 1e-12
        )
        assert item["rank"] == item["closer"] + 1
    assert answer["ranks"][-1]["closer"] == 0  # nothing is closer to king than king


def test_closer_rows_are_listed_in_pages_in_row_order(client: TestClient) -> None:
    query = {"token": "king", "others": ["paris"]}
    closer = rank(client, query)["ranks"][0]["closer"]
    pages = [
        rank(client, {**query, "closer_rows": {"offset": offset, "limit": 500}})["closer_rows"]
        for offset in range(0, closer + 500, 500)
    ]
    listed = [row for page in pages for row in page]
    ids = [row["id"] for row in listed]
    assert len(ids) == closer and ids == sorted(ids) and pages[-1] == []
    paris = rank(client, query)["ranks"][0]["score"]
    assert all(row["score"] > paris for row in listed)
    everything = rank(client, {**query, "closer_rows": {}})["closer_rows"]
    assert everything == listed  # the default limit, max_results, holds them all


def test_zero_rows_never_count_and_have_nothing_above(client: TestClient) -> None:
    small = "/v1/tables/small"
    answer = rank(client, {"token": "king", "others": ["[PAD]", "pear"]}, small)
    pad, pear = answer["ranks"]
    assert (pad["score"], pad["closer"], pad["rank"]) == (None, 0, 1)
    assert pear["closer"] <= len(SMALL_TOKENS) - 3  # neither king nor [PAD] counts
    listed = rank(client, {"id": 2, "others": ["[PAD]"], "closer_rows": {}}, small)
    assert listed["closer_rows"] == []
    refused = client.post(f"{small}/rank", json={"token": "[PAD]", "others": ["king"]})
    assert_envelope(refused, 422, "ZeroVector")


@pytest.mark.parametrize(
    ("body", "status", "error_type"),
    [
        ({"token": "king", "others": ["queen", "paris"], "closer_rows": {}}, 422,
         "ValidationError"),
        ({"token": "king", "id": 5, "others": ["queen"]}, 422, "ValidationError"),
        ({"token": "king", "others": []}, 422, "ValidationError"),
        ({"token": "king", "others": ["queen"] * 65}, 422, "LimitExceeded"),
        ({"token": "king", "others": ["queen"], "closer_rows": {"limit": 40000}}, 422,
         "LimitExceeded"),
        ({"token": "king", "others": ["qqzx", "zzqx"]}, 404, "UnknownToken"),
        ({"id": 99999999, "others": ["queen"]}, 404, "UnknownId"),
        ({"token": "king", "others": [1]}, 422, "ValidationError"),
    ],
)  # fmt: skip
def test_bad_rank_requests_are_clear_4xx(
    client: TestClient, body: dict, status: int, error_type: str
) -> None:
    assert_envelope(client.post(f"{MINILM}/rank", json=body), status, error_type)


@pytest.mark.parametrize(
    ("body", "status", "error_type"),
    [
        ({"token": "king", "positive": ["queen"]}, 422, "ValidationError"),
        ({"vector": [1.0, 2.0]}, 422, "DimensionMismatch"),
        ({"token": "king", "limit": 0}, 422, "ValidationError"),
        ({"token": "king", "offset": -1}, 422, "ValidationError"),
        ({"positive": [], "method": "mul"}, 422, "ValidationError"),
        ({"positive": ["king"], "negative": ["king"]}, 422, "ZeroVector"),
        ({"positive": ["qqzx"], "negative": ["zzqx"]}, 404, "UnknownToken"),
        ({"text": "unbelievably"}, 422, "SeveralPieces"),
    ],
)  # fmt: skip
def test_bad_cosines_requests_are_clear_4xx(
    client: TestClient, body: dict, status: int, error_type: str
) -> None:
    assert_envelope(client.post(f"{MINILM}/cosines", json=body), status, error_type)


def test_checkpoints_are_scored_as_they_were(client: TestClient) -> None:
    run = "/v1/tables/run"
    first = scores(cosines(client, {"token": "w3", "checkpoint": 0}, run))
    last = scores(cosines(client, {"token": "w3"}, run))
    assert first.tobytes() != last.tobytes()
    found = client.post(f"{run}/neighbors", json={"token": "w3", "k": 5, "checkpoint": 0})
    for neighbor in found.json()["neighbors"]:
        assert first[neighbor["id"]] == np.float32(neighbor["score"])
    before = rank(client, {"token": "w3", "others": ["w4"], "checkpoint": 0}, run)
    assert before["ranks"][0]["score"] == pytest.approx(float(first[4]), abs=1e-7)

"""Vectors as base64 of little-endian float32s: the same answers as JSON floats, and refusals."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.engine.tables.table import EmbeddingTable
from tests.api.test_hot_path import lookups

MINILM = "/v1/tables/minilm"


def encode(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


@pytest.fixture(scope="module")
def vector(minilm: EmbeddingTable) -> np.ndarray:
    return np.random.default_rng(21).normal(size=minilm.width).astype(np.float32)


def test_neighbors_of_a_base64_vector_equal_those_of_its_json_floats(client, vector) -> None:
    as_json = client.post(f"{MINILM}/neighbors", json={"vector": vector.tolist(), "k": 7})
    as_b64 = client.post(f"{MINILM}/neighbors", json={"vector_b64": encode(vector), "k": 7})
    assert as_json.status_code == as_b64.status_code == 200
    assert as_json.content == as_b64.content


def test_analogy_terms_and_scoring_take_base64_too(client, vector) -> None:
    for path, floats, b64 in [
        (
            "analogy",
            {"positive": ["king", {"vector": vector.tolist(), "weight": 0.5}], "k": 4},
            {"positive": ["king", {"vector_b64": encode(vector), "weight": 0.5}], "k": 4},
        ),
        (
            "score",
            {"vector": vector.tolist(), "k": 3, "softmax": True, "target": "the"},
            {"vector_b64": encode(vector), "k": 3, "softmax": True, "target": "the"},
        ),
    ]:
        as_json = client.post(f"{MINILM}/{path}", json=floats)
        as_b64 = client.post(f"{MINILM}/{path}", json=b64)
        assert as_json.status_code == as_b64.status_code == 200
        assert as_json.content == as_b64.content


def test_lookup_answers_base64_rows_that_decode_to_the_table_exactly(client, minilm) -> None:
    answer = client.post(f"{MINILM}/lookup", json={"ids": [0, 2001, 5465], "encoding": "base64"})
    assert answer.status_code == 200
    for item in answer.json()["items"]:
        assert "vector" not in item
        decoded = np.frombuffer(base64.b64decode(item["vector_b64"]), dtype="<f4")
        np.testing.assert_array_equal(decoded, minilm.vectors[item["id"]])


def test_base64_vector_queries_are_never_cached(client, vector) -> None:
    before = lookups(client, "hit"), lookups(client, "miss")
    for _ in range(2):
        client.post(f"{MINILM}/neighbors", json={"vector_b64": encode(vector)})
    assert (lookups(client, "hit"), lookups(client, "miss")) == before


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({"vector_b64": encode(np.ones(383))}, "DimensionMismatch"),  # wrong length
        ({"vector_b64": "not base64!"}, "ValidationError"),
        ({"vector_b64": base64.b64encode(b"\0" * 6).decode()}, "ValidationError"),  # 1.5 floats
        ({"vector_b64": ""}, "ValidationError"),
        ({"vector_b64": encode([np.nan] + [1.0] * 383)}, "InvalidVector"),
        ({"vector_b64": encode([1.0] * 383 + [np.inf])}, "InvalidVector"),
        ({"vector_b64": encode([1e30] * 384)}, "InvalidVector"),  # beyond +-1e15
        ({"vector_b64": encode(np.zeros(384))}, "ZeroVector"),
        ({"vector": [1.0] * 384, "vector_b64": encode(np.ones(384))}, "ValidationError"),
        ({"vector_b64": 12}, "ValidationError"),
    ],
)
def test_bad_base64_vectors_are_refused_with_the_envelope(
    client: TestClient, body: dict, error: str
) -> None:
    answer = client.post(f"{MINILM}/neighbors", json=body)
    assert answer.status_code == 422
    assert answer.json()["error"]["type"] == error

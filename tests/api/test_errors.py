"""Bad input: a clear 4xx in the one error envelope, and the server keeps serving."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.conftest import AppOf

MINILM = "/v1/tables/minilm"


def assert_envelope(response, status: int, error_type: str) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == error_type
    assert error["message"]
    return error


def test_unknown_tokens_are_all_named(client: TestClient) -> None:
    response = client.post(
        f"{MINILM}/analogy", json={"positive": ["king", "qqqzz"], "negative": ["xxyyq"]}
    )
    error = assert_envelope(response, 404, "UnknownToken")
    assert error["tokens"] == ["qqqzz", "xxyyq"]
    assert "qqqzz" in error["message"] and "xxyyq" in error["message"]


def test_unknown_tokens_across_a_batch_are_all_named(client: TestClient) -> None:
    queries = [{"token": "nosuchtokena"}, {"token": "king", "exclude": ["nosuchtokenb"]}]
    error = assert_envelope(
        client.post(f"{MINILM}/neighbors", json={"queries": queries}), 404, "UnknownToken"
    )
    assert error["tokens"] == ["nosuchtokena", "nosuchtokenb"]


@pytest.mark.parametrize(
    ("path", "body", "status", "error_type"),
    [
        ("neighbors", {"token": "king", "k": 0}, 422, "ValidationError"),
        ("neighbors", {"token": "king", "k": 501}, 422, "LimitExceeded"),
        ("neighbors", {"token": "king", "id": 3}, 422, "ValidationError"),
        ("neighbors", {}, 422, "ValidationError"),
        ("neighbors", {"token": "king", "colour": "red"}, 422, "ValidationError"),
        ("neighbors", {"token": 7}, 422, "ValidationError"),
        ("neighbors", {"vector": [1.0, 2.0]}, 422, "DimensionMismatch"),
        ("neighbors", {"vector": [0.0] * 384}, 422, "ZeroVector"),
        ("neighbors", {"id": 10**6}, 404, "UnknownId"),
        ("neighbors", {"token": "x" * 300}, 422, "ValidationError"),
        ("neighbors", {"queries": [{"token": "king"}] * 65}, 422, "LimitExceeded"),
        # 64 x 500 = 32,000 results pass; 64 x 513 = 32,832 are past max_results (32,768).
        ("neighbors", {"queries": [{"token": "king", "k": 500}] * 64}, 200, None),
        ("analogy", {"queries": [{"positive": ["king"], "k": 500}] * 64}, 200, None),
        ("analogy", {"positive": []}, 422, "ValidationError"),
        ("analogy", {"positive": ["king"], "negative": ["king"]}, 422, "ZeroVector"),
        ("analogy", {"positive": ["king"] * 17}, 422, "LimitExceeded"),
        ("analogy", {"positive": ["king"], "method": "div"}, 422, "ValidationError"),
        ("similarity", {"pairs": [["king"]]}, 422, "ValidationError"),
        ("similarity", {"pairs": [["king", "queen"]], "tokens": ["king"]}, 422, "ValidationError"),
        ("lookup", {"ids": [-1]}, 422, "ValidationError"),
        ("score", {"vector": [1.0] * 384, "temperature": 0}, 422, "ValidationError"),
        ("score", {"vector": [1.0] * 384, "target": "nosuchtokenc"}, 404, "UnknownToken"),
    ],
)
def test_bad_requests(client: TestClient, path, body, status, error_type) -> None:
    if error_type is None:
        assert client.post(f"{MINILM}/{path}", json=body).status_code == status
        return
    assert_envelope(client.post(f"{MINILM}/{path}", json=body), status, error_type)


def test_results_past_the_limit_are_refused(app_of: AppOf) -> None:
    with app_of(max_results=1000) as limited:
        body = {"queries": [{"token": "king", "k": 100}] * 11}
        error = assert_envelope(
            limited.post(f"{MINILM}/neighbors", json=body), 422, "LimitExceeded"
        )
        assert error["limit"] == 1000 and error["got"] == 1100
        body = {"queries": [{"positive": ["king"], "k": 500}] * 3}
        assert_envelope(limited.post(f"{MINILM}/analogy", json=body), 422, "LimitExceeded")
        body = {"queries": [{"token": "king", "k": 100}] * 10}
        assert limited.post(f"{MINILM}/neighbors", json=body).status_code == 200


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_non_finite_numbers_are_refused(client: TestClient, literal: bytes) -> None:
    # Python's json would accept these; they are not JSON, and a vector must be finite.
    body = b'{"vector": [' + b", ".join([b"0.5"] * 383 + [literal]) + b"]}"
    response = client.post(
        f"{MINILM}/neighbors", content=body, headers={"content-type": "application/json"}
    )
    assert_envelope(response, 400, "MalformedJSON")


def test_finite_numbers_beyond_the_component_limit_are_refused(client: TestClient) -> None:
    response = client.post(f"{MINILM}/neighbors", json={"vector": [0.5] * 383 + [1e300]})
    assert_envelope(response, 422, "ValidationError")


def test_malformed_json(client: TestClient) -> None:
    response = client.post(
        f"{MINILM}/neighbors", content=b'{"token": ', headers={"content-type": "application/json"}
    )
    assert_envelope(response, 400, "MalformedJSON")


def test_unknown_table_route_and_method(client: TestClient) -> None:
    error = assert_envelope(
        client.post("/v1/tables/nope/neighbors", json={"token": "a"}), 404, "UnknownTable"
    )
    assert error["available"] == ["minilm", "small", "run", "wordllama"]
    assert_envelope(client.get("/v2/whatever"), 404, "NotFound")
    assert_envelope(client.get(f"{MINILM}/neighbors"), 405, "MethodNotAllowed")


def test_the_server_keeps_serving_after_errors(client: TestClient) -> None:
    for _ in range(3):
        client.post(f"{MINILM}/neighbors", json={"vector": [float("1e308")] * 2})
    response = client.post(f"{MINILM}/neighbors", json={"token": "king", "k": 1})
    assert response.json()["neighbors"][0]["token"] == "kings"


def test_3cosmul_terms_count_against_the_directions_limit(client: TestClient, minilm) -> None:
    """A 3CosMul query is scored once per term: 16 queries of 16 terms are 256 directions (the
    limit), 17 of them are refused before any work."""
    words = [t for t in minilm.tokens[3000:] if t.isalpha()][:300]
    queries = [
        {"positive": words[i * 16 : i * 16 + 16], "method": "mul", "k": 3} for i in range(17)
    ]
    assert client.post(f"{MINILM}/analogy", json={"queries": queries[:16]}).status_code == 200
    error = assert_envelope(
        client.post(f"{MINILM}/analogy", json={"queries": queries}), 422, "LimitExceeded"
    )
    assert error["limit"] == 256 and error["got"] == 272

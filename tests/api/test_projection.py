"""The projection routes: selections, limits, the error envelope, and agreement with /project."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.engine.tables.table import EmbeddingTable

MINILM = "/v1/tables/minilm"
SMALL = "/v1/tables/small"


def projection(client: TestClient, table: str = MINILM, **body: object) -> dict:
    response = client.post(f"{table}/projection", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def refusal(client: TestClient, path: str, body: object, status: int, error_type: str) -> dict:
    response = client.post(path, json=body)
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == error_type, error
    return error


def test_first_rows_in_frequency_order(client: TestClient, minilm: EmbeddingTable) -> None:
    answer = projection(client, points=300)
    assert answer["method"] == "pca" and answer["dims"] == 2
    assert answer["sample_rows"] == minilm.rows
    first, second = answer["explained_variance_ratio"]
    assert 1 > first > second > 0
    points = answer["points"]
    assert [p["id"] for p in points] == list(range(300))
    assert points[5] == {
        "token": minilm.tokens[5],
        "id": 5,
        "norm": pytest.approx(float(minilm.norms[5])),
        "x": points[5]["x"],
        "y": points[5]["y"],
        "metadata": {},
    }


def test_zero_rows_are_never_plotted_and_cannot_be_named(client: TestClient) -> None:
    # The small table's row 0 is [PAD], all zeros.
    assert [p["id"] for p in projection(client, SMALL, points=3)["points"]] == [1, 2, 3]
    assert 0 not in [p["id"] for p in projection(client, SMALL, points=100)["points"]]
    tokens = {"selection": {"tokens": ["king", "[PAD]"]}}
    error = refusal(client, f"{SMALL}/projection", tokens, 422, "ZeroVector")
    assert "[PAD]" in error["message"]


def test_random_rows_are_seeded(client: TestClient) -> None:
    def ids(seed: int) -> list[int]:
        answer = projection(client, points=200, selection="random", seed=seed)
        return [p["id"] for p in answer["points"]]

    assert ids(7) == ids(7) != ids(8)
    assert ids(7) == sorted(set(ids(7)))


def letters_only(token: str) -> bool:
    """The word rule for plain tokens, from Unicode's categories rather than str.isalpha."""
    return len(token) >= 2 and all(unicodedata.category(c).startswith("L") for c in token)


def test_words_are_the_first_whole_words_but_the_suspects(
    client: TestClient, minilm: EmbeddingTable
) -> None:
    answer = projection(client, points=20_000, selection="words")
    diagnostics = client.post(f"{MINILM}/diagnostics", json={"limit": 1000}).json()
    assert diagnostics["indicator"]["name"] == "reference_cosine"
    suspects = {row["id"] for row in diagnostics["suspects"]}
    assert len(suspects) == diagnostics["suspect_count"]  # every one, in this page
    words = [row for row, token in enumerate(minilm.tokens) if letters_only(token)]
    expected = [row for row in words if row not in suspects][:20_000]
    ids = [p["id"] for p in answer["points"]]
    assert ids == expected and answer["words"] == 20_000
    assert suspects & set(words[: words.index(ids[-1])])  # some words were left out as suspects
    assert "words" not in projection(client, points=10)


def test_words_fill_up_with_other_rows_and_keep_a_norm_rankings_suspects(
    client: TestClient,
) -> None:
    # The small table has no reference rows: its suspects are its lowest norms, which stay.
    answer = projection(client, SMALL, points=20, selection="words")
    assert [p["id"] for p in answer["points"]] == list(range(1, 9)) and answer["words"] == 8
    # The checkpoint set's tokens (w0, w1, ...) are no words: its first rows are drawn instead.
    first = projection(client, "/v1/tables/run", points=30)
    answer = projection(client, "/v1/tables/run", points=30, selection="words")
    assert answer["points"] == first["points"] and answer["words"] == 0


def test_named_tokens_in_order_with_case_fallback(client: TestClient) -> None:
    answer = projection(client, SMALL, dims=3, selection={"tokens": ["QUEEN", "man", "man"]})
    assert [p["token"] for p in answer["points"]] == ["queen", "man"]
    assert answer["matched"] == {"QUEEN": "queen"}
    assert all("z" in p for p in answer["points"])
    error = refusal(
        client,
        f"{MINILM}/projection",
        {"selection": {"tokens": ["king", "xq1", "xq2"]}},
        404,
        "UnknownToken",
    )
    assert error["tokens"] == ["xq1", "xq2"]


def test_a_fit_on_the_selection_is_a_pca_of_exactly_those_rows(client, minilm) -> None:
    tokens = ["king", "queen", "prince", "paris", "berlin", "apple", "pear"]
    table = projection(client, dims=3, selection={"tokens": tokens})
    own = projection(client, dims=3, selection={"tokens": tokens}, fit="selection")
    assert (table["fit"], own["fit"], own["sample_rows"]) == ("table", "selection", 7)
    units = minilm.vectors[[minilm.token_to_id[t] for t in tokens]].astype(np.float64)
    units /= np.linalg.norm(units, axis=1, keepdims=True)
    centred = units - units.mean(axis=0)
    _, singular, right = np.linalg.svd(centred, full_matrices=False)
    drawn = np.array([[p["x"], p["y"], p["z"]] for p in own["points"]])
    expected = centred @ right[:3].T
    np.testing.assert_allclose(np.abs(drawn), np.abs(expected), atol=1e-9)  # up to sign
    ratios = singular[:3] ** 2 / np.sum(singular**2)
    assert own["explained_variance_ratio"] == pytest.approx(ratios.tolist(), abs=1e-9)
    assert own["explained_variance_ratio"][0] > table["explained_variance_ratio"][0]
    path = f"{MINILM}/projection"
    one = {"selection": {"tokens": ["king"]}, "fit": "selection"}
    assert "at least 2 rows" in refusal(client, path, one, 422, "InvalidQuery")["message"]
    two = {"selection": {"tokens": ["king", "queen"]}, "fit": "selection", "dims": 3}
    assert "at most 2 dims" in refusal(client, path, two, 422, "InvalidQuery")["message"]


def test_project_agrees_with_the_projection(client: TestClient, minilm: EmbeddingTable) -> None:
    plotted = {p["token"]: p for p in projection(client, points=4000)["points"]}
    placed = client.post(f"{MINILM}/project", json={"tokens": ["king", "kings"]}).json()
    king, kings = placed["points"]
    assert (king["x"], king["y"]) == pytest.approx((plotted["king"]["x"], plotted["king"]["y"]))
    assert kings["id"] == 5465 and "kings" not in plotted
    # A raw vector is normalised first: twice king's row lands on king.
    vector = (minilm.vectors[2332].astype(np.float64) * 2).tolist()
    raw = client.post(f"{MINILM}/project", json={"vectors": [vector]}).json()["points"][0]
    assert raw == {"x": pytest.approx(king["x"]), "y": pytest.approx(king["y"])}


def test_configured_limits_are_422_limit_exceeded(client: TestClient) -> None:
    error = refusal(client, f"{MINILM}/projection", {"points": 20_001}, 422, "LimitExceeded")
    assert error["limit"] == 20_000
    many = {"selection": {"tokens": ["king"] * 20_001}}
    refusal(client, f"{MINILM}/projection", many, 422, "LimitExceeded")
    # The test app's max_batch is 64.
    refusal(client, f"{MINILM}/project", {"tokens": ["king"] * 65}, 422, "LimitExceeded")


@pytest.mark.parametrize(
    "body",
    [
        {"dims": 4},
        {"dims": "2"},
        {"dims": True},
        {"points": 0},
        {"points": 1_000_001},
        {"method": "tsne"},
        {"selection": "last"},
        {"selection": {"tokens": []}},
        {"seed": -1},
        {"colour": "red"},
    ],
)
def test_invalid_projection_requests(client: TestClient, body: dict) -> None:
    refusal(client, f"{MINILM}/projection", body, 422, "ValidationError")


@pytest.mark.parametrize(
    ("body", "status", "error_type"),
    [
        ({}, 422, "ValidationError"),
        ({"tokens": ["king"], "vectors": [[1.0] * 384]}, 422, "ValidationError"),
        ({"vectors": [[1.0] * 383]}, 422, "DimensionMismatch"),
        ({"vectors": [[1.0] * 384, [0.0] * 384]}, 422, "ZeroVector"),
        ({"tokens": ["king"], "dims": 5}, 422, "ValidationError"),
        ({"tokens": ["no-such-token-here"]}, 404, "UnknownToken"),
    ],
)
def test_invalid_project_requests(
    client: TestClient, body: dict, status: int, error_type: str
) -> None:
    refusal(client, f"{MINILM}/project", body, status, error_type)


def test_unknown_tables_and_wrong_content_types(client: TestClient) -> None:
    refusal(client, "/v1/tables/nope/projection", {}, 404, "UnknownTable")
    response = client.post(f"{MINILM}/projection", content=b"{}")
    assert response.status_code == 415
    assert response.json()["error"]["type"] == "UnsupportedMediaType"


def test_a_fit_on_the_selection_is_bounded_by_the_tables_own_fit(app_of) -> None:
    with app_of(projection_sample_rows=5) as client:
        body = {"selection": {"tokens": ["king", "queen", "man", "woman", "boy", "girl"]}}
        assert client.post(f"{MINILM}/projection", json=body).status_code == 200
        error = refusal(
            client, f"{MINILM}/projection", {**body, "fit": "selection"}, 422, "LimitExceeded"
        )
        assert (error["limit"], error["got"]) == (5, 6)

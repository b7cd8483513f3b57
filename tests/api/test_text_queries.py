"""{"text": ...} wherever a query takes a token: one piece is that token, several their mean.

Mean-of-pieces answers are checked against a numpy reference computed from the raw rows.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.api.test_hot_path import lookups
from tests.robustness.conftest import assert_envelope

MINILM = "/v1/tables/minilm"
UNBELIEVABLY = ["un", "##bel", "##ie", "##va", "##bly"]


def post(client, operation: str, body: dict, table: str = MINILM) -> dict:
    response = client.post(f"{table}/{operation}", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def reference_neighbours(table, direction: np.ndarray, exclude: set[int], k: int) -> list:
    """Top-k cosine over every non-zero row, in float64, minus `exclude`."""
    rows = table.vectors.astype(np.float64)
    norms = np.linalg.norm(rows, axis=1)
    scores = np.full(table.rows, -np.inf)
    scores[norms > 0] = rows[norms > 0] @ direction / norms[norms > 0]
    scores[list(exclude)] = -np.inf
    top = np.argsort(-scores, kind="stable")[:k]
    return [(int(row), float(scores[row])) for row in top]


def rows_of(table, tokens: list[str]) -> list[int]:
    return [table.token_to_id[token] for token in tokens]


def test_a_one_piece_text_is_its_token(client) -> None:
    by_text = post(client, "neighbors", {"text": "King", "k": 5})
    by_token = post(client, "neighbors", {"token": "king", "k": 5})
    assert by_text["neighbors"] == by_token["neighbors"]
    assert by_text["matched"] == {"King": "king"}  # lower-cased by the model's normaliser


def test_several_pieces_are_refused_with_the_split(client) -> None:
    error = assert_envelope(
        client.post(f"{MINILM}/neighbors", json={"text": "unbelievably"}), 422, "SeveralPieces"
    )
    assert error["pieces"] == UNBELIEVABLY
    assert error["count"] == 5
    assert "un ##bel ##ie ##va ##bly" in error["message"]
    assert '"pieces": "mean"' in error["message"]


def test_mean_of_pieces_neighbours_match_numpy(client, minilm) -> None:
    answer = post(client, "neighbors", {"text": "unbelievably", "pieces": "mean", "k": 12})
    assert answer["matched"] == {"unbelievably": UNBELIEVABLY}
    pieces = rows_of(minilm, UNBELIEVABLY)
    mean = minilm.vectors[pieces].astype(np.float64).mean(axis=0)
    expected = reference_neighbours(minilm, unit(mean), set(pieces), 12)
    got = [(n["id"], n["score"]) for n in answer["neighbors"]]
    assert [row for row, _ in got] == [row for row, _ in expected]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-12)
    assert not set(pieces) & {row for row, _ in got}  # the input pieces never answer


def test_mean_analogy_terms_match_numpy(client, minilm) -> None:
    body = {"positive": [{"text": "unbelievably", "pieces": "mean"}, "good"], "negative": ["bad"]}
    answer = post(client, "analogy", {**body, "k": 8})
    pieces = rows_of(minilm, UNBELIEVABLY)
    good, bad = rows_of(minilm, ["good", "bad"])
    rows = minilm.vectors.astype(np.float64)
    mean = unit(rows[pieces].mean(axis=0))
    direction = unit(mean + unit(rows[good]) - unit(rows[bad]))
    expected = reference_neighbours(minilm, direction, {*pieces, good, bad}, 8)
    got = [(n["id"], n["score"]) for n in answer["neighbors"]]
    assert [row for row, _ in got] == [row for row, _ in expected]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-12)


def test_one_piece_terms_are_tokens(client) -> None:
    by_text = post(
        client, "analogy", {"positive": [{"text": "King"}, "woman"], "negative": ["man"]}
    )
    by_token = post(client, "analogy", {"positive": ["king", "woman"], "negative": ["man"]})
    assert by_text["neighbors"] == by_token["neighbors"]


def test_pieces_count_as_analogy_terms(client) -> None:
    # max_terms is 16: five pieces three times and one more token make 16, then 17.
    term = {"text": "unbelievably", "pieces": "mean"}
    assert post(client, "analogy", {"positive": [term, term, term, "good"]})
    response = client.post(f"{MINILM}/analogy", json={"positive": [term, term, term, "a", "b"]})
    error = assert_envelope(response, 422, "LimitExceeded")
    assert (error["limit"], error["got"]) == (16, 17)


def test_similarity_takes_texts(client, minilm) -> None:
    pairs = [["king", {"text": "Queen"}], [{"text": "unbelievably", "pieces": "mean"}, "good"]]
    answer = post(client, "similarity", {"pairs": pairs})
    assert [p["tokens"] for p in answer["pairs"]] == [["king", "Queen"], ["unbelievably", "good"]]
    by_token = post(client, "similarity", {"pairs": [["king", "queen"]]})
    assert answer["pairs"][0]["score"] == by_token["pairs"][0]["score"]
    mean = minilm.vectors[rows_of(minilm, UNBELIEVABLY)].astype(np.float64).mean(axis=0)
    good = minilm.vectors[minilm.token_to_id["good"]].astype(np.float64)
    assert answer["pairs"][1]["score"] == pytest.approx(unit(mean) @ unit(good), rel=1e-12)
    matrix = post(client, "similarity", {"tokens": ["king", {"text": "QUEEN"}]})
    assert matrix["tokens"] == ["king", "QUEEN"]
    assert matrix["matrix"][0][1] == pytest.approx(by_token["pairs"][0]["score"], rel=1e-12)


def test_lookup_of_a_mean_has_no_id(client, minilm) -> None:
    body = {"tokens": [{"text": "Running"}, {"text": "unbelievably", "pieces": "mean"}]}
    running, mean = post(client, "lookup", body)["items"]
    assert (running["token"], running["id"]) == ("running", minilm.token_to_id["running"])
    assert (mean["token"], mean.get("id"), mean["metadata"]) == ("unbelievably", None, {})
    expected = minilm.vectors[rows_of(minilm, UNBELIEVABLY)].astype(np.float64).mean(axis=0)
    np.testing.assert_allclose(mean["vector"], expected, rtol=1e-6)
    assert mean["norm"] == pytest.approx(np.linalg.norm(expected), rel=1e-12)


def test_score_the_row_of_king_against_every_row(client, minilm) -> None:
    answer = post(client, "score", {"text": "king", "k": 3, "target": "queen"})
    [king] = rows_of(minilm, ["king"])
    by_vector = post(client, "score", {"vector": minilm.vectors[king].tolist(), "k": 3})
    assert [t["id"] for t in answer["top"]] == [t["id"] for t in by_vector["top"]]
    assert [t["logit"] for t in answer["top"]] == [t["logit"] for t in by_vector["top"]]
    winner = answer["top"][0]
    assert (winner["id"], winner["token"], winner["text"]) == (king, "king", "king")
    assert answer["target"]["text"] == "queen"
    assert "text" not in by_vector["top"][0]  # decoded text only for text queries


def test_empty_and_unknown_texts(client) -> None:
    response = client.post(f"{MINILM}/neighbors", json={"text": " \n "})
    assert_envelope(response, 422, "EmptyText")
    response = client.post(f"{MINILM}/neighbors", json={"text": ""})
    assert_envelope(response, 422, "ValidationError")
    body = {"pairs": [[{"text": "king plum"}, "kiwi"], ["queen", {"text": "Fig"}]]}
    error = assert_envelope(
        client.post("/v1/tables/small/similarity", json=body), 404, "UnknownToken"
    )
    assert error["tokens"] == ["kiwi", "plum", "Fig"]


def test_over_long_texts_are_refused(client) -> None:
    for body in (
        {"text": "a " * 5_001, "pieces": "mean"},
        {"queries": [{"text": "x" * 9_000}, {"text": "y" * 2_000}]},
    ):
        response = client.post(f"{MINILM}/neighbors", json=body)
        assert_envelope(response, 422, "LimitExceeded")


def test_a_word_table_takes_texts(client) -> None:
    answer = post(client, "neighbors", {"text": "KING", "k": 2}, "/v1/tables/small")
    assert answer["matched"] == {"KING": "King"}
    mean = post(client, "neighbors", {"text": "king queen", "pieces": "mean"}, "/v1/tables/small")
    assert mean["matched"] == {"king queen": ["king", "queen"]}
    assert not {"king", "queen"} & {n["token"] for n in mean["neighbors"]}


def test_text_queries_are_cached(client) -> None:
    body = {"text": "Lookup tables", "pieces": "mean", "k": 4}
    hits, misses = lookups(client, "hit"), lookups(client, "miss")
    first = client.post(f"{MINILM}/neighbors", json=body)
    second = client.post(f"{MINILM}/neighbors", json=body)
    assert first.status_code == 200
    assert first.content == second.content
    assert (lookups(client, "hit"), lookups(client, "miss")) == (hits + 1, misses + 1)

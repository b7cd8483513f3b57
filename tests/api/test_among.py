"""/neighbors among a candidate set through the real app: exact answers, one set for a batch,
clear refusals, and an approximate index that answers it exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient

from service.api.app import create_app
from service.config import Settings, TableSpec
from service.engine.tables.table import EmbeddingTable
from tests.api.test_big_tables import ROWS, wait_ready, write_clustered
from tests.conftest import AppOf
from tests.engine.test_among import oracle
from tests.robustness.conftest import assert_envelope

MINILM = "/v1/tables/minilm/neighbors"


def test_a_query_among_a_set_answers_its_exact_top_k(client: TestClient, minilm) -> None:
    among = np.random.default_rng(4).choice(minilm.rows, size=2000, replace=False).tolist()
    king = minilm.token_to_id["king"]
    answer = client.post(MINILM, json={"token": "king", "k": 8, "among": among}).json()
    ids, scores = oracle(minilm, king, np.asarray(among), 8)
    assert [n["id"] for n in answer["neighbors"]] == ids
    assert np.allclose([n["score"] for n in answer["neighbors"]], scores, rtol=0, atol=1e-12)


def test_a_batch_names_its_set_once(client: TestClient, minilm: EmbeddingTable) -> None:
    among = list(range(5000, 7000, 2))
    queries = [{"id": row, "k": 5} for row in among[:40]]
    batch = client.post(MINILM, json={"queries": queries, "among": among}).json()
    for query, result in zip(queries, batch["results"], strict=True):
        single = client.post(MINILM, json={**query, "among": among}).json()
        assert result["neighbors"] == single["neighbors"]
        assert query["id"] not in {n["id"] for n in result["neighbors"]}
        assert {n["id"] for n in result["neighbors"]} <= set(among)


def test_a_set_is_refused_clearly(app_of: AppOf, minilm: EmbeddingTable) -> None:
    with app_of(max_among=10) as client:
        unknown = client.post(MINILM, json={"token": "king", "among": [1, 2, minilm.rows]})
        assert assert_envelope(unknown, 404, "UnknownId")["ids"] == [minilm.rows]
        many = client.post(MINILM, json={"token": "king", "among": list(range(11))})
        error = assert_envelope(many, 422, "LimitExceeded")
        assert (error["limit"], error["got"]) == (10, 11)
        assert "among" in error["message"]
        assert_envelope(client.post(MINILM, json={"token": "king", "among": []}), 422,
                        "ValidationError")  # fmt: skip
        both = client.post(MINILM, json={"token": "king", "among": [1, 2], "restrict": 9})
        assert "among or restrict" in assert_envelope(both, 422, "ValidationError")["message"]
        batch = {"queries": [{"token": "king", "restrict": 9}], "among": [1, 2]}
        assert_envelope(client.post(MINILM, json=batch), 422, "ValidationError")
        inside = {"queries": [{"token": "king", "among": [1, 2]}]}
        assert_envelope(client.post(MINILM, json=inside), 422, "ValidationError")
        assert client.get("/v1/limits").json()["max_among"] == 10


def test_an_hnsw_table_answers_a_set_exactly(tmp_path: Path) -> None:
    path = write_clustered(tmp_path / "tables")
    spec = TableSpec(name="big", path=path, vocab=path.with_suffix(".vocab"), index="hnsw")
    table = EmbeddingTable([f"w{i}" for i in range(ROWS)], np.load(path))
    among = list(range(0, ROWS, 4))
    with TestClient(create_app(Settings(tables=[spec]))) as client:
        assert wait_ready(client)["index"]["kind"] == "hnsw"
        for body in ({"token": "w5"}, {"token": "w5", "ef_search": 1}):
            answer = client.post("/v1/tables/big/neighbors", json={**body, "k": 10, "among": among})
            ids, scores = oracle(table, 5, np.asarray(among), 10)
            neighbours = answer.json()["neighbors"]
            assert [n["id"] for n in neighbours] == ids
            assert np.allclose([n["score"] for n in neighbours], scores, rtol=0, atol=1e-12)

"""Routes serialise with orjson directly; every answer must still match its declared model."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from pydantic import BaseModel

from service.schemas import diagnostics as schemas_diagnostics
from service.schemas import projection as schemas_projection
from service.schemas import ranking as schemas_ranking
from service.schemas import text as schemas_text
from service.schemas import training as schemas_training
from service.schemas.search import NeighborsBatchResponse, NeighborsResponse
from service.schemas.vectors import LookupResponse, ScoreResponse, SimilarityResponse

MINILM = "/v1/tables/minilm"
VECTOR = [0.25] * 384
BATCH = NeighborsBatchResponse

CASES = [
    ("lookup", {"tokens": ["king"]}, LookupResponse),
    ("lookup", {"ids": [5], "include_vector": False}, LookupResponse),
    ("neighbors", {"token": "king"}, NeighborsResponse),
    ("neighbors", {"vector": VECTOR, "k": 3}, NeighborsResponse),
    ("neighbors", {"queries": [{"id": 7}, {"token": "queen"}]}, NeighborsBatchResponse),
    ("analogy", {"positive": ["king", "woman"], "negative": ["man"]}, NeighborsResponse),
    (
        "analogy",
        {"queries": [{"positive": ["a"], "method": "mul"}]},
        NeighborsBatchResponse,
    ),
    ("similarity", {"pairs": [["king", "queen"]]}, SimilarityResponse),
    ("similarity", {"tokens": ["king", "queen"]}, SimilarityResponse),
    ("score", {"vector": VECTOR, "k": 2}, ScoreResponse),
    ("score", {"vector": VECTOR, "softmax": True, "target": "king"}, ScoreResponse),
    ("projection", {"points": 50}, schemas_projection.ProjectionResponse),
    (
        "projection",
        {"dims": 3, "selection": {"tokens": ["king"]}},
        schemas_projection.ProjectionResponse,
    ),
    ("project", {"tokens": ["king", "queen"]}, schemas_projection.ProjectResponse),
    ("project", {"vectors": [VECTOR], "dims": 3}, schemas_projection.ProjectResponse),
    ("diagnostics", {"tokens": ["king"], "limit": 3}, schemas_diagnostics.DiagnosticsResponse),
    (
        "evaluate",
        {"analogies": ": s\nman woman king queen\n"},
        schemas_diagnostics.AnalogyEvaluationResponse,
    ),
    (
        "evaluate",
        {"pairs": "king\tqueen\t9\nman\twoman\t8\napple\tking\t1\n"},
        schemas_diagnostics.PairsEvaluationResponse,
    ),
    ("tokenize", {"text": "Embeddings are lookup tables"}, schemas_text.TokenizeResponse),
    (
        "tokenize",
        {"texts": ["king"], "include_vector": True, "add_special_tokens": True},
        schemas_text.TokenizeBatchResponse,
    ),
    ("tokenize", {"detokenize": [2332, 3035]}, schemas_text.DetokenizeResponse),
    ("neighbors", {"text": "unbelievably", "pieces": "mean"}, NeighborsResponse),
    ("lookup", {"tokens": [{"text": "lookup", "pieces": "mean"}]}, LookupResponse),
    ("similarity", {"tokens": ["king", {"text": "Queen"}]}, SimilarityResponse),
    ("score", {"text": "king", "target": "queen"}, ScoreResponse),
    ("cosines", {"token": "king", "limit": 10}, schemas_ranking.CosinesResponse),
    ("cosines", {"positive": ["king"], "method": "mul"}, schemas_ranking.CosinesResponse),
    ("rank", {"token": "king", "others": ["queen"]}, schemas_ranking.RankResponse),
    (
        "rank",
        {"token": "king", "others": ["queen"], "closer_rows": {}},
        schemas_ranking.RankResponse,
    ),
]


@pytest.mark.parametrize(("path", "body", "model"), CASES)
def test_answers_match_their_models(
    client: TestClient, path: str, body: dict, model: type[BaseModel]
) -> None:
    response = client.post(f"{MINILM}/{path}", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    parsed = model.model_validate(response.json())
    assert parsed.model_dump(mode="json", exclude_none=True) == response.json()


RUN_CASES = [
    ("neighbors", {"token": "w1", "checkpoint": 0}, NeighborsResponse),
    ("lookup", {"tokens": ["w1"], "checkpoint": 2}, LookupResponse),
    ("trajectory", {"tokens": ["w1", "w2"]}, schemas_training.TrajectoryResponse),
    ("trajectory", {"points": 20, "dims": 3}, schemas_training.TrajectoryResponse),
    ("drift", {"tokens": ["w1"], "k": 3, "limit": 3}, schemas_training.DriftResponse),
]


@pytest.mark.parametrize(("path", "body", "model"), RUN_CASES)
def test_checkpoint_answers_match_their_models(
    client: TestClient, path: str, body: dict, model: type[BaseModel]
) -> None:
    response = client.post(f"/v1/tables/run/{path}", json=body)
    assert response.status_code == 200, response.text
    parsed = model.model_validate(response.json())
    assert parsed.model_dump(mode="json", exclude_none=True) == response.json()


def test_a_drift_between_tables_matches_its_model(client: TestClient) -> None:
    response = client.post("/v1/tables/small/drift", json={"from": "small", "limit": 2})
    assert response.status_code == 200, response.text
    parsed = schemas_training.DriftResponse.model_validate(response.json())
    assert parsed.model_dump(mode="json", exclude_none=True) == response.json()

"""POST /v1/embeddings (OpenAI's) and POST /embed (TEI's) equal the models' own libraries.

The app serves a Model2Vec folder written by model2vec itself (per-token weights, normalised,
max_length 16, so most Lee lines are cut), WordLlama's model from its package and MiniLM (a
plain table); every vector is held to Model2Vec's StaticModel.encode or WordLlama's embed
within 1e-5 (tests/static_models.py), as floats and as base64.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY

from service.api.app import create_app
from service.api.routes import embedding as embedding_routes
from service.config import Settings, TableSpec, default_static_table, default_table
from service.operations import embedding as embedding_operations
from tests.conftest import AppOf
from tests.static_models import (
    model2vec_folder,
    model2vec_oracle,
    texts,
    wordllama_oracle,
)

TOLERANCE = 1e-5
# Every text but the empty one, which both APIs refuse (OpenAI's and TEI's alike).
TEXTS = [text for text in texts() if text]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("m2v") / "model"
    return model2vec_folder(folder, weights=True, normalize=True, max_length=16)


@pytest.fixture(scope="module")
def client(folder: Path) -> Iterator[TestClient]:
    # WordLlama the first static model: the one /embed uses when none is configured.
    tables = [default_table(), default_static_table(), TableSpec(name="m2v", path=folder)]
    settings = Settings(tables=tables, diagnostics_at_load=False)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def model2vec(folder: Path) -> Any:
    return model2vec_oracle(folder)


@pytest.fixture(scope="module")
def wordllama(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return wordllama_oracle(tmp_path_factory.mktemp("wordllama-cache"))


def embeddings(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post("/v1/embeddings", json=body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def vectors_of(answer: dict[str, Any]) -> np.ndarray:
    """The answer's vectors in input order, decoded from floats or base64."""
    data = sorted(answer["data"], key=lambda item: item["index"])
    rows = [
        np.frombuffer(base64.b64decode(item["embedding"]), "<f4")
        if isinstance(item["embedding"], str)
        else np.asarray(item["embedding"], dtype=np.float32)
        for item in data
    ]
    return np.vstack(rows)


@pytest.mark.parametrize("encoding", ["float", "base64"])
def test_model2vec_over_openai_s_api_equals_encode(
    client: TestClient, model2vec: Any, encoding: str
) -> None:
    answer = embeddings(client, model="m2v", input=TEXTS, encoding_format=encoding)
    assert answer["object"] == "list" and answer["model"] == "m2v"
    assert [item["index"] for item in answer["data"]] == list(range(len(TEXTS)))
    expected = model2vec.encode(TEXTS)
    np.testing.assert_allclose(vectors_of(answer), expected, rtol=0, atol=TOLERANCE)
    pooled = sum(len(ids) for ids in model2vec.tokenize([t[:96] for t in TEXTS]))
    assert answer["usage"] == {"prompt_tokens": pooled, "total_tokens": pooled}


@pytest.mark.parametrize("encoding", ["float", "base64"])
def test_wordllama_over_openai_s_api_equals_embed(
    client: TestClient, wordllama: Any, encoding: str
) -> None:
    answer = embeddings(client, model="wordllama", input=TEXTS, encoding_format=encoding)
    np.testing.assert_allclose(vectors_of(answer), wordllama.embed(TEXTS), rtol=0, atol=TOLERANCE)


def test_one_text_is_one_input(client: TestClient, wordllama: Any) -> None:
    answer = embeddings(client, model="wordllama", input="A single sentence.")
    assert len(answer["data"]) == 1
    expected = wordllama.embed(["A single sentence."])
    np.testing.assert_allclose(vectors_of(answer), expected, rtol=0, atol=TOLERANCE)


def test_token_ids_embed_as_the_text_they_split_from(client: TestClient, model2vec: Any) -> None:
    text = "the committee said on tuesday it would meet again"
    ids = model2vec.tokenizer.encode(text, add_special_tokens=False).ids
    one = embeddings(client, model="m2v", input=ids)
    both = embeddings(client, model="m2v", input=[ids, ids[:3]])
    expected = model2vec.encode([text, model2vec.tokenizer.decode(ids[:3])])
    np.testing.assert_allclose(vectors_of(one), expected[:1], rtol=0, atol=TOLERANCE)
    np.testing.assert_allclose(vectors_of(both), expected, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize("width", [64, 128])
def test_dimensions_cut_wordllama_as_its_trunc_dim(
    client: TestClient, width: int, tmp_path: Path
) -> None:
    answer = embeddings(client, model="wordllama", input=TEXTS[:20], dimensions=width)
    expected = wordllama_oracle(tmp_path, trunc_dim=width).embed(TEXTS[:20])
    np.testing.assert_allclose(vectors_of(answer), expected, rtol=0, atol=TOLERANCE)


@pytest.mark.parametrize(
    ("body", "status", "kind", "said"),
    [
        ({"model": "m2v", "input": "a", "dimensions": 64}, 422, "InvalidQuery", "full width"),
        ({"model": "wordllama", "input": "a", "dimensions": 100}, 422, "InvalidQuery", "64, 128"),
        ({"model": "minilm", "input": "a"}, 422, "InvalidQuery", "not a static embedding"),
        ({"model": "nosuch", "input": "a"}, 404, "UnknownTable", "no table named 'nosuch'"),
        ({"model": "m2v", "input": [1, 10**6]}, 404, "UnknownId", "out of range [0, 8000)"),
        ({"model": "m2v", "input": ""}, 422, "ValidationError", "at least 1 character"),
        ({"model": "m2v"}, 422, "ValidationError", "input: Field required"),
    ],
)  # fmt: skip
def test_a_request_the_model_cannot_answer_is_a_clear_4xx(
    client: TestClient, body: dict[str, Any], status: int, kind: str, said: str
) -> None:
    response = client.post("/v1/embeddings", json=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["type"] == kind and said in error["message"]


def embedded_batches() -> float:
    """Batches the embedding worker has computed (its histogram's count)."""
    value = REGISTRY.get_sample_value("embedding_service_batch_size_count", {"operation": "embed"})
    return value or 0.0


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"model": "wordllama", "input": ["a"] * 257}, "embedding inputs is 257"),
        ({"model": "wordllama", "input": ["a", "b" * 8193]}, "one embedding input is 8193"),
        ({"model": "wordllama", "input": [[1] * 8193]}, "one embedding input is 8193"),
        ({"model": "nosuch", "input": ["a"] * 257}, "embedding inputs is 257"),
    ],
)
def test_a_body_over_the_bounds_is_refused_before_it_is_split(
    client: TestClient, body: dict[str, Any], said: str
) -> None:
    before = embedded_batches()
    response = client.post("/v1/embeddings", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["type"] == "LimitExceeded"
    assert said in response.json()["error"]["message"]
    assert embedded_batches() == before  # nothing reached the worker that splits texts


def test_embed_uses_the_first_static_model_and_normalises(
    client: TestClient, wordllama: Any
) -> None:
    response = client.post("/embed", json={"inputs": TEXTS})
    assert response.status_code == 200
    expected = wordllama.embed(TEXTS, norm=True)
    np.testing.assert_allclose(np.asarray(response.json()), expected, rtol=0, atol=TOLERANCE)
    raw = client.post("/embed", json={"inputs": "one text", "normalize": False}).json()
    np.testing.assert_allclose(raw, wordllama.embed(["one text"]), rtol=0, atol=TOLERANCE)


def test_embed_refuses_a_text_its_model_would_cut_unless_truncate(
    folder: Path, model2vec: Any
) -> None:
    settings = Settings(tables=[TableSpec(name="m2v", path=folder)], embed_table="m2v")
    long = TEXTS[0]  # a Lee line: far past 16 pieces
    with TestClient(create_app(settings)) as client:
        refused = client.post("/embed", json={"inputs": ["short", long]})
        assert refused.status_code == 422
        assert "input 1 is longer than table 'm2v' reads" in refused.json()["error"]["message"]
        answered = client.post("/embed", json={"inputs": ["short", long], "truncate": True})
        expected = model2vec.encode(["short", long])  # normalised by its config
        np.testing.assert_allclose(answered.json(), expected, rtol=0, atol=TOLERANCE)


def test_embed_without_a_static_model_says_so() -> None:
    settings = Settings(tables=[default_table()], diagnostics_at_load=False)
    with TestClient(create_app(settings)) as client:
        response = client.post("/embed", json={"inputs": "a text"})
    assert response.status_code == 422
    assert "no static embedding model is served" in response.json()["error"]["message"]


def test_a_table_says_its_recipe(client: TestClient, model2vec: Any) -> None:
    facts = client.get("/v1/tables/m2v").json()["embedding"]
    assert facts == {
        "library": "model2vec",
        "pooling": "mean",
        "normalize": True,
        "max_tokens": 16,
        "max_characters": 16 * model2vec.median_token_length,
        "unknown_id": model2vec.unk_token_id,
        "dimensions": [],
        "token_weights": True,
    }
    assert client.get("/v1/tables/minilm").json()["embedding"] is None


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_a_text_query_on_a_static_model_is_its_embedding(
    client: TestClient, wordllama: Any
) -> None:
    first, second = "the prime minister said", "a cat sat on the mat"
    pairs = {"pairs": [[{"text": first}, {"text": second}]]}
    [pair] = client.post("/v1/tables/wordllama/similarity", json=pairs).json()["pairs"]
    a, b = wordllama.embed([first, second])
    assert pair["score"] == pytest.approx(cosine(a, b), abs=TOLERANCE)
    # Neighbours of the embedding: the rows' cosines to it, its own pieces left out.
    found = client.post("/v1/tables/wordllama/neighbors", json={"text": first, "k": 5}).json()
    rows = wordllama.embedding
    scores = rows @ a / (np.linalg.norm(rows, axis=1) * np.linalg.norm(a) + 1e-30)
    own = set(wordllama.tokenizer.encode(first, add_special_tokens=False).ids)
    expected = [int(i) for i in np.argsort(-scores) if int(i) not in own][:5]
    assert [item["id"] for item in found["neighbors"]] == expected


def test_the_explorer_s_queries_answer_on_a_static_model(client: TestClient) -> None:
    picture = client.post("/v1/tables/wordllama/projection", json={"points": 50})
    assert picture.status_code == 200 and len(picture.json()["points"]) == 50
    suspects = client.post("/v1/tables/wordllama/diagnostics", json={"limit": 5})
    assert suspects.status_code == 200 and len(suspects.json()["suspects"]) == 5


def test_a_static_model_kept_in_the_cache_directory_embeds_as_its_source(
    folder: Path, model2vec: Any, tmp_path: Path
) -> None:
    settings = Settings(
        tables=[TableSpec(name="m2v", path=folder)], cache_dir=tmp_path, diagnostics_at_load=False
    )
    for _ in range(2):  # written to the cache, then opened from it
        with TestClient(create_app(settings)) as client:
            answer = embeddings(client, model="m2v", input=TEXTS)
        np.testing.assert_allclose(vectors_of(answer), model2vec.encode(TEXTS), atol=TOLERANCE)
    [entry] = [path for path in tmp_path.iterdir() if path.name.startswith("m2v-")]
    assert (entry / "token_weights.npy").is_file()


DOOR_REQUESTS = [
    ("/v1/embeddings", {"model": "wordllama", "input": ["a cat sat", "naïve café"]}),
    ("/v1/embeddings", {"model": "wordllama", "input": [[450, 6635]], "dimensions": 64}),
    ("/v1/embeddings", {"model": "wordllama", "input": "x", "encoding_format": "base64"}),
    ("/v1/embeddings", {"model": "minilm", "input": "x"}),  # 422: not a static model
    ("/v1/embeddings", {"model": "wordllama", "input": ""}),  # 422: invalid
    ("/v1/embeddings", {"model": "nosuch", "input": "x"}),  # 404
    ("/embed", {"inputs": ["a cat sat", "a dog ran"], "normalize": False}),
    ("/embed", {"inputs": "x", "dimensions": 100}),  # 422: no such width
]


def test_the_direct_door_answers_as_the_routes(
    app_of: AppOf, monkeypatch: pytest.MonkeyPatch
) -> None:
    routed_answers: list[str] = []

    async def recording(operation: Any, *args: Any) -> Any:
        routed_answers.append(operation.name)
        return await embedding_operations.answer(operation, *args)

    monkeypatch.setattr(embedding_routes, "answer", recording)
    with app_of(cache_bytes=0) as fast, app_of(cache_bytes=0, direct_queries=False) as slow:
        for path, body in DOOR_REQUESTS:
            direct, routed = fast.post(path, json=body), slow.post(path, json=body)
            assert direct.status_code == routed.status_code, (path, body)
            assert direct.content == routed.content, (path, body)
    # The routes answered the second app's requests only: the first app's took the edge's door.
    assert routed_answers == [path.rsplit("/", 1)[1] for path, _ in DOOR_REQUESTS]

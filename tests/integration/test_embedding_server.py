"""OpenAI's own Python client against the real server: /v1/embeddings as OpenAI's API.

`python -m service serve` runs as a subprocess (uvicorn, the edge, the batcher) with a Model2Vec
folder written by model2vec and WordLlama's model; OpenAI's SDK is pointed at it with
`base_url`, unchanged, and every vector is held to the models' own libraries within 1e-5. The
SDK asks for base64 unless told otherwise, so both encodings are crossed.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.server import running_server
from service.config import default_static_table
from tests.static_models import model2vec_folder, model2vec_oracle, texts, wordllama_oracle

pytestmark = pytest.mark.slow

TOLERANCE = 1e-5
TEXTS = [text for text in texts() if text]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return model2vec_folder(tmp_path_factory.mktemp("m2v") / "model", weights=True)


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[str]:
    tables = [
        {"name": "m2v", "path": str(folder)},
        {"name": "wordllama", "path": str(default_static_table().path)},
    ]
    with running_server({"EMBEDDING_SERVICE_TABLES": json.dumps(tables)}) as base:
        yield base


@pytest.fixture(scope="module")
def openai_client(server: str) -> Iterator[Any]:
    from openai import OpenAI

    client = OpenAI(base_url=f"{server}/v1", api_key="no key is configured", max_retries=0)
    yield client
    client.close()


def decoded(embedding: list[float] | str) -> np.ndarray:
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding), "<f4")
    return np.asarray(embedding, dtype=np.float32)


@pytest.mark.parametrize("encoding", [None, "float", "base64"])
def test_openai_s_client_gets_model2vec_s_vectors(
    openai_client: Any, folder: Path, encoding: str | None
) -> None:
    options = {} if encoding is None else {"encoding_format": encoding}
    answer = openai_client.embeddings.create(model="m2v", input=TEXTS, **options)
    # The SDK decodes base64 it asked for itself; asked for by the caller, it hands it over.
    vectors = np.vstack([decoded(item.embedding) for item in answer.data])
    expected = model2vec_oracle(folder).encode(TEXTS)
    np.testing.assert_allclose(vectors, expected, rtol=0, atol=TOLERANCE)
    assert answer.model == "m2v" and answer.usage.prompt_tokens > len(TEXTS)


def test_openai_s_client_gets_wordllama_s_vectors_and_widths(
    openai_client: Any, tmp_path: Path
) -> None:
    answer = openai_client.embeddings.create(model="wordllama", input=TEXTS)
    vectors = np.asarray([item.embedding for item in answer.data], dtype=np.float32)
    np.testing.assert_allclose(vectors, wordllama_oracle(tmp_path).embed(TEXTS), atol=TOLERANCE)
    cut = openai_client.embeddings.create(model="wordllama", input="a text", dimensions=64)
    expected = wordllama_oracle(tmp_path, trunc_dim=64).embed(["a text"])[0]
    np.testing.assert_allclose(cut.data[0].embedding, expected, rtol=0, atol=TOLERANCE)


def test_openai_s_client_raises_the_service_s_error(openai_client: Any) -> None:
    from openai import UnprocessableEntityError

    with pytest.raises(UnprocessableEntityError, match="only its full width, 384"):
        openai_client.embeddings.create(model="m2v", input="a text", dimensions=64)


def test_tei_s_embed_over_the_socket(server: str, folder: Path) -> None:
    import httpx

    # /embed's table: the first static model served, m2v; TEI normalises by default.
    some = TEXTS[-7:]  # the edge cases: each read whole by max_length 512
    answer = httpx.post(f"{server}/embed", json={"inputs": some}, timeout=30)
    assert answer.status_code == 200
    expected = model2vec_oracle(folder).encode(some, normalize=True)
    np.testing.assert_allclose(np.asarray(answer.json()), expected, rtol=0, atol=TOLERANCE)

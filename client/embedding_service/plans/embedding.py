"""The embed plan: texts -> their vectors from a static embedding model (POST /v1/embeddings)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from embedding_service.decoding import decode_vector
from embedding_service.plans import Answer, Call, Plan, batched, body

EMBEDDINGS_PATH = "/v1/embeddings"


def embed(
    table: str, texts: str | Sequence[str], *, dimensions: int | None = None
) -> Plan[np.ndarray]:
    """Texts' embeddings by a static model (Model2Vec, WordLlama): float32, one row per text
    (one vector for a single text), equal to the model's own library; `dimensions` cuts them
    to one of its Matryoshka widths."""
    single = isinstance(texts, str)
    items = [texts] if isinstance(texts, str) else list(texts)

    fields = {"model": table, "encoding_format": "base64", **body(dimensions=dimensions)}

    def read(answers: list[Answer]) -> np.ndarray:
        vectors = np.vstack([_vectors(answer) for answer in answers])
        return vectors[0] if single else vectors

    return batched(Call("POST", EMBEDDINGS_PATH, fields), "input", items, read)


def _vectors(answer: Answer) -> np.ndarray:
    """One answer's vectors, in the order of its inputs."""
    data = sorted(answer["data"], key=lambda item: item["index"])
    return np.vstack([decode_vector(item["embedding"]) for item in data])

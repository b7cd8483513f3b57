"""The pieces several operations write their answers with: each operation writes its own
answer with these, serialised once with orjson, in the shape of the response models its route
declares (tests validate them against the models).
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import orjson

from service.engine.search.queries import (
    Neighbors,
)
from service.engine.tables.pieces import PLAIN, readable
from service.engine.tables.table import EmbeddingTable


def dumps(payload: Any) -> bytes:
    """Serialise a response payload."""
    return orjson.dumps(payload)


def neighbor_list(table: EmbeddingTable, result: Neighbors) -> list[dict[str, Any]]:
    """[{"token", "id", "score"}, ...] for one engine result (a model's tokens readable too)."""
    tokens = table.vocabulary.take(result.ids)  # one gather of the packed tokens
    answer = [
        {"token": token, "id": row, "score": score}
        for token, row, score in zip(
            tokens, result.ids.tolist(), result.scores.tolist(), strict=True
        )
    ]
    add_readable(table, answer)
    return answer


def add_readable(table: EmbeddingTable, items: list[dict[str, Any]]) -> None:
    """Put each item's token as the text it stands for beside it ("text", and "incomplete"
    for part of a character), when the table is a byte-level or SentencePiece model's."""
    style = None if table.model is None else table.model.pieces
    if style is None or style == PLAIN:
        return
    for item in items:
        text, incomplete = readable(item["token"], style)
        item["text"] = text
        if incomplete:
            item["incomplete"] = True


def add_vector(item: dict[str, Any], vector: np.ndarray, encoding: str | None) -> None:
    """Put a row into an answer item as "vector" (floats) or "vector_b64"; None: neither."""
    if encoding == "float":
        item["vector"] = vector.astype(np.float32).tolist()
    elif encoding == "base64":
        item["vector_b64"] = base64.b64encode(vector.astype("<f4").tobytes()).decode()

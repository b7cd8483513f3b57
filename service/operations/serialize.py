"""Engine results to JSON response bytes, serialised once with orjson.

Queries are answered with these bytes directly: the shapes match the response models declared
on the routes (tests validate them against the models), without a second validation pass.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import orjson

from service.engine.search.queries import Neighbors, Scores
from service.engine.tables.model import head_of
from service.engine.tables.pieces import PLAIN, readable
from service.engine.tables.table import EmbeddingTable
from service.engine.tables.text import Split

JSON = "application/json"


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


# Query -> stored token (case fallback, one-piece texts), or a text -> its pieces.
Matched = dict[str, str | list[str]]


def neighbors_json(
    table: EmbeddingTable, results: Sequence[Neighbors], matched: Matched, batch: bool
) -> bytes:
    """The neighbours (or batch) response body."""
    if batch:
        lists = [{"neighbors": neighbor_list(table, result)} for result in results]
        return dumps({"matched": matched, "results": lists})
    return dumps({"matched": matched, "neighbors": neighbor_list(table, results[0])})


def cosines_json(matched: Matched, rows: int, offset: int, scores: np.ndarray) -> bytes:
    """The /cosines response body, its scores as base64 of little-endian float32s. The base64
    is spliced in as bytes (it needs no escaping): orjson reserves several times a string's
    length, and a page of 1,048,576 scores (5.6 MB of base64) peaked at 63 MB in it."""
    head = dumps({"matched": matched, "rows": rows, "offset": offset, "count": int(scores.size)})
    encoded = base64.b64encode(scores.astype("<f4").data)
    return b"".join((head[:-1], b',"scores_b64":"', encoded, b'"}'))


def lookup_items(
    table: EmbeddingTable, rows: np.ndarray, encoding: str | None
) -> list[dict[str, Any]]:
    """[{"token", "id", "norm", ["vector" | "vector_b64"], "metadata"}, ...] for table rows.

    `encoding` "float" answers JSON floats, "base64" little-endian float32 bytes in base64,
    None no vector.
    """
    items = []
    norms = table.norms[rows].tolist()
    for row, norm in zip(rows.tolist(), norms, strict=True):
        item: dict[str, Any] = {"token": table.tokens[row], "id": row, "norm": norm}
        add_vector(item, table.vectors[row], encoding)
        item["metadata"] = table.metadata_of(row)
        items.append(item)
    return items


def add_vector(item: dict[str, Any], vector: np.ndarray, encoding: str | None) -> None:
    """Put a row into an answer item as "vector" (floats) or "vector_b64"; None: neither."""
    if encoding == "float":
        item["vector"] = vector.astype(np.float32).tolist()
    elif encoding == "base64":
        item["vector_b64"] = base64.b64encode(vector.astype("<f4").tobytes()).decode()


def mean_item(text: str, vector: np.ndarray, encoding: str | None) -> dict[str, Any]:
    """A lookup item for the mean of a text's pieces: no row of its own, so no id."""
    item: dict[str, Any] = {"token": text, "norm": float(np.linalg.norm(vector))}
    add_vector(item, vector, encoding)
    item["metadata"] = {}
    return item


def split_payload(table: EmbeddingTable, split: Split, encoding: str | None) -> dict[str, Any]:
    """{"text", "pieces", "words"} for one split text; with `encoding`, each piece's row."""
    pieces = []
    for row, (start, end), word in zip(split.ids, split.offsets, split.words, strict=True):
        piece: dict[str, Any] = {"token": table.tokens[row], "id": row, "start": start, "end": end}
        if word is not None:
            piece["word"] = word
        add_vector(piece, table.vectors[row], encoding)
        pieces.append(piece)
    add_readable(table, pieces)
    words = [
        {
            "word": word.index,
            "text": split.text[word.start : word.end],
            "start": word.start,
            "end": word.end,
            "pieces": word.pieces,
            "one_row": word.pieces == 1,
        }
        for word in split.word_spans()
    ]
    return {"text": split.text, "pieces": pieces, "words": words}


Decode = Callable[[Sequence[int]], str]


def scores_json(
    table: EmbeddingTable, scores: Scores, matched: Matched, decode: Decode | None = None
) -> bytes:
    """The output-scoring response body; with `decode`, each row as text too."""
    tokens = table.tokens
    probabilities = scores.probabilities.tolist() if scores.probabilities is not None else None
    top = []
    for i, (row, logit) in enumerate(zip(scores.ids.tolist(), scores.logits.tolist(), strict=True)):
        entry: dict[str, Any] = {"token": tokens[row], "id": row, "logit": logit}
        if probabilities is not None:
            entry["probability"] = probabilities[i]
        if decode is not None:
            entry["text"] = decode([row])
        top.append(entry)
    add_readable(table, top)
    payload: dict[str, Any] = {"matched": matched, "head": head_of(table), "top": top}
    if scores.log_partition is not None:
        payload["log_partition"] = scores.log_partition
    if scores.target_rank is not None:
        payload["target"] = _target(table, scores, decode)
    return dumps(payload)


def _target(table: EmbeddingTable, scores: Scores, decode: Decode | None) -> dict[str, Any]:
    target: dict[str, Any] = {"logit": scores.target_logit, "rank": scores.target_rank}
    row = scores.target_row
    target.update(token=table.tokens[row], id=row)
    if scores.target_probability is not None:
        target["probability"] = scores.target_probability
    if decode is not None:
        target["text"] = decode([row])
    add_readable(table, [target])
    return target

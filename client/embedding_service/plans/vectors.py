"""Lookup, similarity and scoring plans: rows as numpy arrays, in the order asked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, overload

import numpy as np

from embedding_service.decoding import decode, decode_vector, encode_vector
from embedding_service.models.search import Text
from embedding_service.models.vectors import Lookup, Score, Similarities, SimilarityMatrix
from embedding_service.plans import Answer, Plan, batched, body, merged_matched, one_call, post
from embedding_service.plans import keys as wire

Key = str | Text


def lookup(
    table: str,
    tokens: Key | Sequence[Key] | None = None,
    *,
    ids: Sequence[int] | None = None,
    include_vector: bool = True,
    checkpoint: int | None = None,
) -> Plan[Lookup]:
    """Rows by token (or Text) or by id, in order: vectors as an (n, width) float32 array."""
    if (tokens is None) == (ids is None):
        raise TypeError("give exactly one of tokens and ids")
    field, items = ("tokens", wire.keys(tokens)) if tokens is not None else ("ids", _ids(ids))
    options = body(
        include_vector=include_vector,
        encoding="base64" if include_vector else None,
        checkpoint=checkpoint,
    )

    return batched(post(table, "lookup", options), field, items, _lookup)


def _ids(ids: Sequence[int] | None) -> list[int]:
    return [int(row) for row in ids or ()]


def _lookup(answers: list[Answer]) -> Lookup:
    items = [item for answer in answers for item in answer["items"]]
    vectors = None
    if items and "vector_b64" in items[0]:
        vectors = np.stack([decode_vector(item["vector_b64"]) for item in items])
    return Lookup(
        tokens=[item["token"] for item in items],
        ids=[item.get("id") for item in items],
        norms=np.array([item["norm"] for item in items], dtype=np.float64),
        vectors=vectors,
        metadata=[item.get("metadata") or {} for item in items],
        matched=merged_matched(answers),
    )


@overload
def similarity(
    table: str, pairs: Sequence[tuple[Key, Key]], *, checkpoint: int | None = None
) -> Plan[Similarities]: ...
@overload
def similarity(
    table: str, *, tokens: Sequence[Key], checkpoint: int | None = None
) -> Plan[SimilarityMatrix]: ...
def similarity(
    table: str,
    pairs: Sequence[tuple[Key, Key]] | None = None,
    *,
    tokens: Sequence[Key] | None = None,
    checkpoint: int | None = None,
) -> Plan[Similarities] | Plan[SimilarityMatrix]:
    """Cosines of pairs (in chunks, in order), or the matrix of every pair of `tokens`."""
    if (pairs is None) == (tokens is None):
        raise TypeError("give exactly one of pairs and tokens")
    options = body(checkpoint=checkpoint)
    if tokens is not None:
        return one_call(
            post(table, "similarity", {"tokens": wire.keys(tokens), **options}), _matrix
        )
    items = [[wire.key(first), wire.key(second)] for first, second in pairs or ()]

    return batched(post(table, "similarity", options), "pairs", items, _pairs)


def _pairs(answers: list[Answer]) -> Similarities:
    scored = [pair for answer in answers for pair in answer["pairs"]]
    return Similarities(
        pairs=[(pair["tokens"][0], pair["tokens"][1]) for pair in scored],
        scores=np.array([pair["score"] for pair in scored], dtype=np.float64),
        matched=merged_matched(answers),
    )


def _matrix(answer: Answer) -> SimilarityMatrix:
    matrix = np.array(answer["matrix"], dtype=np.float64)
    return SimilarityMatrix(answer["tokens"], matrix, matched=answer.get("matched") or {})


def score(
    table: str,
    query: np.ndarray | Text,
    k: int | None = None,
    *,
    softmax: bool = False,
    temperature: float = 1.0,
    target: str | None = None,
) -> Plan[Score]:
    """Raw logits `rows @ vector` (a tied output layer): the top k rows, and a target's rank."""
    if isinstance(query, Text):
        source: dict[str, Any] = {"text": query.text, "pieces": query.pieces}
    else:
        source = {"vector_b64": encode_vector(query)}
    options = body(k=k, softmax=softmax or None, temperature=temperature, target=target)
    call = post(table, "score", {**source, **options})
    return one_call(call, lambda answer: decode(Score, answer))

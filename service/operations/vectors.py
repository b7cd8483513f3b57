"""Answering lookup, similarity and scoring requests.

Lookups and similarities run on a worker thread: copying hundreds of rows to JSON, or a matrix
product, would otherwise hold the event loop (and OpenBLAS serialises with the batch worker).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from service.engine.search.cosine import cosine_matrix, pair_cosines
from service.engine.search.queries import ScoreQuery, Scores
from service.engine.search.scoring import plan_score
from service.engine.tables.model import head_of
from service.engine.tables.table import EmbeddingTable
from service.metrics import timed
from service.operations.answers import add_readable, add_vector, dumps
from service.operations.context import Context
from service.operations.resolving import Resolver, label, resolved, split_keys
from service.schemas.common import MatchedNames
from service.schemas.vectors import LookupRequest, ScoreRequest, SimilarityRequest


async def lookup(body: LookupRequest, context: Context) -> bytes:
    """The JSON answer to a lookup: token (or text) -> id + row, or id -> token + row."""
    resolver = Resolver(context.served, context.limits)
    if body.tokens is not None:
        context.limits.check_batch(len(body.tokens))
        await resolved(context, resolver, *split_keys(body.tokens))
        rows = [resolver.key_row(key) for key in body.tokens]
    else:
        ids = body.ids or []
        context.limits.check_batch(len(ids))
        rows = context.served.table.check_ids(ids).tolist()
    keys: Sequence[Any] = body.tokens if body.tokens is not None else rows

    def write() -> bytes:
        with timed("lookup"):
            vectors = body.encoding if body.include_vector else None
            found = np.asarray([row for row in rows if row is not None], dtype=np.int64)
            items = iter(lookup_items(context.served.table, found, vectors))
            answer: list[dict[str, Any]] = [
                next(items) if row is not None else _mean_item(resolver, key, vectors)
                for key, row in zip(keys, rows, strict=True)
            ]
        return dumps({"matched": resolver.matched, "items": answer})

    return await context.runtime.in_thread(write)


def _mean_item(resolver: Resolver, key: Any, encoding: str | None) -> dict[str, Any]:
    return mean_item(label(key), resolver.raw_vector(key), encoding)


async def similarity(body: SimilarityRequest, context: Context) -> bytes:
    """The JSON answer to a similarity request: cosines of pairs, or a matrix of tokens."""
    resolver = Resolver(context.served, context.limits)
    if body.pairs is not None:
        context.limits.check_batch(len(body.pairs))
        await resolved(context, resolver, *split_keys(key for pair in body.pairs for key in pair))
        left = resolver.directions([a for a, _ in body.pairs])
        right = resolver.directions([b for _, b in body.pairs])
        with timed("similarity"):
            scores = (await context.runtime.in_thread(pair_cosines, left, right)).tolist()
        pairs = [
            {"tokens": (label(a), label(b)), "score": s}
            for (a, b), s in zip(body.pairs, scores, strict=True)
        ]
        return dumps({"matched": resolver.matched, "pairs": pairs})
    assert body.tokens is not None
    context.limits.check_batch(len(body.tokens))
    context.limits.check_matrix(len(body.tokens))
    await resolved(context, resolver, *split_keys(body.tokens))
    directions = resolver.directions(body.tokens)
    with timed("similarity"):
        matrix = (await context.runtime.in_thread(cosine_matrix, directions)).tolist()
    tokens = [label(key) for key in body.tokens]
    return dumps({"matched": resolver.matched, "tokens": tokens, "matrix": matrix})


async def score(body: ScoreRequest, context: Context) -> bytes:
    """The JSON answer to output scoring: raw dot products with every row, top-k and target."""
    resolver = Resolver(context.served, context.limits)
    tokens = [token for token in (body.token, body.target) if token is not None]
    texts = [] if body.text is None else [(body.text, body.pieces)]
    await resolved(context, resolver, tokens, texts)
    target = resolver.row(body.target) if body.target else None
    vector, _, _ = resolver.query_source(body)  # a token's or id's raw row, as a text's
    query = ScoreQuery(
        vector=np.asarray(vector, dtype=np.float32),
        k=context.limits.checked_k(body.k),
        softmax=body.softmax,
        temperature=body.temperature,
        target=target,
    )
    search = context.served.search
    scores = await context.runtime.score.submit((search, plan_score(search, query)))
    decode = context.served.text.decode if body.text is not None else None
    return scores_json(context.served.table, scores, resolver.matched, decode)


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


def mean_item(text: str, vector: np.ndarray, encoding: str | None) -> dict[str, Any]:
    """A lookup item for the mean of a text's pieces: no row of its own, so no id."""
    item: dict[str, Any] = {"token": text, "norm": float(np.linalg.norm(vector))}
    add_vector(item, vector, encoding)
    item["metadata"] = {}
    return item


Decode = Callable[[Sequence[int]], str]


def scores_json(
    table: EmbeddingTable, scores: Scores, matched: MatchedNames, decode: Decode | None = None
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

"""Answering lookup, similarity and scoring requests.

Lookups and similarities run on a worker thread: copying hundreds of rows to JSON, or a matrix
product, would otherwise hold the event loop (and OpenBLAS serialises with the batch worker).
"""

from __future__ import annotations

import numpy as np
from starlette.concurrency import run_in_threadpool

from service import schemas
from service.api.context import Context
from service.api.resolve import Resolver, vector_of
from service.api.serialize import dumps, lookup_items, scores_json
from service.engine.queries import ScoreQuery
from service.engine.scoring import prepare_score
from service.metrics import timed


async def lookup(body: schemas.LookupRequest, context: Context) -> bytes:
    """The JSON answer to a lookup: token -> id + row, or id -> token + row."""
    resolver = Resolver(context.served, context.limits)
    if body.tokens is not None:
        context.limits.check_batch(len(body.tokens))
        rows = resolver.resolve(body.tokens).row_array(body.tokens)
    else:
        ids = body.ids or []
        context.limits.check_batch(len(ids))
        rows = context.served.table.check_ids(ids)

    def write() -> bytes:
        with timed("lookup"):
            vectors = body.encoding if body.include_vector else None
            items = lookup_items(context.served.table, rows, vectors)
        return dumps({"matched": resolver.matched, "items": items})

    return await run_in_threadpool(write)


async def similarity(body: schemas.SimilarityRequest, context: Context) -> bytes:
    """The JSON answer to a similarity request: cosines of pairs, or a matrix of tokens."""
    resolver = Resolver(context.served, context.limits)
    index = context.served.index
    if body.pairs is not None:
        context.limits.check_batch(len(body.pairs))
        resolver.resolve(token for pair in body.pairs for token in pair)
        left = resolver.row_array([a for a, _ in body.pairs])
        right = resolver.row_array([b for _, b in body.pairs])
        with timed("similarity"):
            scores = (await run_in_threadpool(index.similarity, left, right)).tolist()
        pairs = [{"tokens": p, "score": s} for p, s in zip(body.pairs, scores, strict=True)]
        return dumps({"matched": resolver.matched, "pairs": pairs})
    assert body.tokens is not None
    context.limits.check_batch(len(body.tokens))
    context.limits.check_matrix(len(body.tokens))
    rows = resolver.resolve(body.tokens).row_array(body.tokens)
    with timed("similarity"):
        matrix = (await run_in_threadpool(index.similarity_matrix, rows)).tolist()
    return dumps({"matched": resolver.matched, "tokens": body.tokens, "matrix": matrix})


async def score(body: schemas.ScoreRequest, context: Context) -> bytes:
    """The JSON answer to output scoring: raw dot products with every row, top-k and target."""
    resolver = Resolver(context.served, context.limits)
    target = resolver.resolve([body.target]).row(body.target) if body.target else None
    query = ScoreQuery(
        vector=vector_of(body.vector, body.vector_b64).astype(np.float32),
        k=context.limits.checked_k(body.k),
        softmax=body.softmax,
        temperature=body.temperature,
        target=target,
    )
    index = context.served.index
    scores = await context.runtime.score.submit((index, prepare_score(index, query)))
    return scores_json(context.served.table, scores, resolver.matched)

"""Answering /cosines (every row's score against one query) and /rank (rows above a row).

Both run on a worker thread: a /cosines answer is a float64 pass over up to max_cosine_rows
rows (times its directions), a /rank answer one float32 pass over the table; neither waits in
the search batcher, whose passes keep only a top k.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np

from service.engine.search.cosine import Plan, directions
from service.engine.search.queries import NeighborQuery, Neighbors
from service.engine.search.ranking import Ranks, exact_cosines, ranks, scores_of
from service.metrics import timed
from service.operations.answers import add_readable, dumps, neighbor_list
from service.operations.context import Context
from service.operations.resolving import Resolver, TextName, resolved
from service.schemas.common import MatchedNames
from service.schemas.ranking import CosinesQueryRequest, CosinesTermsRequest, RankRequest
from service.schemas.search import RequestTerm

CosinesRequest = CosinesQueryRequest | CosinesTermsRequest


async def cosines(body: CosinesRequest, context: Context) -> bytes:
    """The JSON answer to /cosines: one float32 score per row of the page, base64."""
    resolver = Resolver(context.served, context.limits)
    await resolved(context, resolver, *_names(body))
    plan = plan_cosines(resolver, body)
    rows = context.served.table.rows
    available = max(0, rows - body.offset)
    count = context.limits.cosine_rows(body.limit, available, directions(plan))
    start, stop = min(body.offset, rows), min(body.offset, rows) + count
    store = context.served.search.store

    def write() -> bytes:
        with timed("cosines"):
            scores = scores_of(store, plan, start, stop)
        return cosines_json(resolver.matched, rows, body.offset, scores)

    return await context.runtime.in_thread(write)


def plan_cosines(resolver: Resolver, body: CosinesRequest) -> Plan:
    """The engine's plan of a /cosines query: the direction /neighbors (or /analogy) would
    search with, or the 3CosMul terms."""
    search = resolver.served.search
    if isinstance(body, CosinesTermsRequest):
        return search.plan_analogy(resolver.analogy_terms(body))
    vector, _, row = resolver.query_source(body)
    return search.plan(NeighborQuery(vector, 1, row=row))


def _names(body: CosinesRequest) -> tuple[list[str], list[TextName]]:
    """The tokens and texts a /cosines query names."""
    if isinstance(body, CosinesQueryRequest):
        tokens = [] if body.token is None else [body.token]
        return tokens, [] if body.text is None else [(body.text, body.pieces)]
    terms: list[RequestTerm] = [*body.positive, *body.negative]
    named = [t if isinstance(t, str) else t.token for t in terms]
    texts: list[TextName] = [
        (t.text, t.pieces) for t in terms if not isinstance(t, str) and t.text is not None
    ]
    return [t for t in named if t is not None], texts


async def rank(body: RankRequest, context: Context) -> bytes:
    """The JSON answer to /rank: each other row's cosine and the rows above it."""
    context.limits.check_batch(len(body.others))
    listing = body.closer_rows
    limit = None if listing is None else context.limits.closer_rows(listing.limit)
    resolver = Resolver(context.served, context.limits)
    await resolved(context, resolver, [*([body.token] if body.token else []), *body.others])
    table, search = context.served.table, context.served.search
    row = resolver.row(body.token) if body.token else _row_of(context, body.id)
    direction = search.store.directions(np.asarray([row]))[0]  # ZeroVector for a zero row
    others = resolver.row_array(body.others)

    def write() -> bytes:
        # Up to max_results closer rows are written: on this thread, not the event loop.
        with timed("rank"):
            found = ranks(search.store, search.kernel, direction, others, row, limit is not None)
        answer = {"token": table.tokens[row], "id": row, "ranks": _ranks(context, found, others)}
        if listing is not None and limit is not None:
            page = _page(found, listing.offset, limit)
            scores = exact_cosines(search.store, direction, page)
            answer["closer_rows"] = neighbor_list(table, Neighbors(ids=page, scores=scores))
        return dumps({"matched": resolver.matched, **answer})

    return await context.runtime.in_thread(write)


def _row_of(context: Context, row: int | None) -> int:
    assert row is not None  # the request names a token or an id
    return int(context.served.table.check_ids([row])[0])  # UnknownId outside the rows


def _ranks(context: Context, found: Ranks, others: np.ndarray) -> list[dict[str, Any]]:
    """Each other row's rank item (a model's tokens readable too, as in /neighbors)."""
    tokens = context.served.table.tokens
    items: list[dict[str, Any]] = [
        {
            "token": tokens[row],
            "id": row,
            "score": None if math.isnan(score) else score,
            "closer": closer,
            "rank": closer + 1,
        }
        for row, score, closer in zip(
            others.tolist(), found.scores.tolist(), found.closer.tolist(), strict=True
        )
    ]
    add_readable(context.served.table, items)
    return items


def _page(found: Ranks, offset: int, limit: int) -> np.ndarray:
    listed = found.listed if found.listed is not None else np.empty(0, dtype=np.int64)
    return listed[offset : offset + limit]


def cosines_json(matched: MatchedNames, rows: int, offset: int, scores: np.ndarray) -> bytes:
    """The /cosines response body, its scores as base64 of little-endian float32s. The base64
    is spliced in as bytes (it needs no escaping): orjson reserves several times a string's
    length, and a page of 1,048,576 scores (5.6 MB of base64) peaked at 63 MB in it."""
    head = dumps({"matched": matched, "rows": rows, "offset": offset, "count": int(scores.size)})
    encoded = base64.b64encode(scores.astype("<f4").data)
    return b"".join((head[:-1], b',"scores_b64":"', encoded, b'"}'))

"""Answering neighbour and analogy requests: resolve, prepare, search in the shared batcher."""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.search.cosine import CosineSearch, Plan, directions
from service.operations.context import Context
from service.operations.resolve import Resolver, texts_of, tokens_of
from service.operations.serialize import Matched, neighbors_json
from service.schemas.search import (
    AnalogyBatchRequest,
    AnalogyRequest,
    NeighborsBatchRequest,
    NeighborsRequest,
)

SearchRequest = NeighborsRequest | AnalogyRequest
BATCHES = (NeighborsBatchRequest, AnalogyBatchRequest)
SearchBody = NeighborsRequest | NeighborsBatchRequest | AnalogyRequest | AnalogyBatchRequest


# Requests naming more tokens than this are resolved and prepared on a worker thread: a batch
# of 256 analogies with 1,000 exclusions each took 0.3 s, which the event loop cannot give.
ON_LOOP_TOKENS = 64


async def search(body: SearchBody, context: Context) -> bytes:
    """The JSON answer to a neighbour or analogy request, single or batch."""
    batch = isinstance(body, BATCHES)
    queries: Sequence[SearchRequest] = body.queries if isinstance(body, BATCHES) else [body]
    context.limits.check_batch(len(queries))
    if _off_the_loop(queries):
        prepared, matched = await context.runtime.in_thread(_plan_all, queries, context)
    else:
        prepared, matched = _plan_all(queries, context)
    results = await context.runtime.search.submit_many(prepared)
    return neighbors_json(context.served.table, results, matched, batch)


def _off_the_loop(queries: Sequence[SearchRequest]) -> bool:
    """Many tokens, or any text: splitting takes about 0.75 us a character."""
    texts = any(texts_of(query) for query in queries)
    return texts or sum(len(tokens_of(query)) for query in queries) > ON_LOOP_TOKENS


def _plan_all(
    queries: Sequence[SearchRequest], context: Context
) -> tuple[list[tuple[CosineSearch, Plan]], Matched]:
    """Every query resolved, checked against the limits and prepared for the batcher."""
    resolver = Resolver(context.served, context.limits)
    resolver.resolve(
        [token for query in queries for token in tokens_of(query)],
        [text for query in queries for text in texts_of(query)],
    )
    search = context.served.search
    prepared = [(search, _plan(resolver, query)) for query in queries]
    context.limits.check_results(sum(query.k for _, query in prepared))
    context.limits.check_directions(sum(directions(query) for _, query in prepared))
    return prepared, resolver.matched


def names_only(body: SearchBody) -> bool:
    """Whether every query names only tokens, ids and texts: then it has one answer per table
    load (a text's split is fixed by the tokenizer loaded with the table)."""
    queries: Sequence[SearchRequest] = body.queries if isinstance(body, BATCHES) else [body]
    return all(_names_only(query) for query in queries)


def _names_only(query: SearchRequest) -> bool:
    if isinstance(query, NeighborsRequest):
        return query.token is not None or query.id is not None or query.text is not None
    terms = [*query.positive, *query.negative]
    return all(isinstance(t, str) or t.token is not None or t.text is not None for t in terms)


def _plan(resolver: Resolver, query: SearchRequest) -> Plan:
    search = resolver.served.search
    if isinstance(query, NeighborsRequest):
        return search.plan(resolver.neighbor_query(query))
    return search.plan_analogy(resolver.analogy_query(query))

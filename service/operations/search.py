"""Answering neighbour and analogy requests: resolve, prepare, search in the shared batcher."""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.search.cosine import Prepared, SimilarityIndex, directions
from service.operations.context import Context
from service.operations.resolve import Resolver, texts_of, tokens_of
from service.operations.serialize import Matched, neighbors_json
from service.schemas import common as schemas

Query = schemas.NeighborsRequest | schemas.AnalogyRequest
BATCHES = (schemas.NeighborsBatchRequest, schemas.AnalogyBatchRequest)
SearchBody = (
    schemas.NeighborsRequest
    | schemas.NeighborsBatchRequest
    | schemas.AnalogyRequest
    | schemas.AnalogyBatchRequest
)


# Requests naming more tokens than this are resolved and prepared on a worker thread: a batch
# of 256 analogies with 1,000 exclusions each took 0.3 s, which the event loop cannot give.
ON_LOOP_TOKENS = 64


async def search(body: SearchBody, context: Context) -> bytes:
    """The JSON answer to a neighbour or analogy request, single or batch."""
    batch = isinstance(body, BATCHES)
    queries: Sequence[Query] = body.queries if isinstance(body, BATCHES) else [body]
    context.limits.check_batch(len(queries))
    if _off_the_loop(queries):
        prepared, matched = await context.runtime.in_thread(_prepare_all, queries, context)
    else:
        prepared, matched = _prepare_all(queries, context)
    results = await context.runtime.search.submit_many(prepared)
    return neighbors_json(context.served.table, results, matched, batch)


def _off_the_loop(queries: Sequence[Query]) -> bool:
    """Many tokens, or any text: splitting takes about 0.75 us a character."""
    texts = any(texts_of(query) for query in queries)
    return texts or sum(len(tokens_of(query)) for query in queries) > ON_LOOP_TOKENS


def _prepare_all(
    queries: Sequence[Query], context: Context
) -> tuple[list[tuple[SimilarityIndex, Prepared]], Matched]:
    """Every query resolved, checked against the limits and prepared for the batcher."""
    resolver = Resolver(context.served, context.limits)
    resolver.resolve(
        [token for query in queries for token in tokens_of(query)],
        [text for query in queries for text in texts_of(query)],
    )
    index = context.served.index
    prepared = [(index, _prepare(resolver, query)) for query in queries]
    context.limits.check_results(sum(query.k for _, query in prepared))
    context.limits.check_directions(sum(directions(query) for _, query in prepared))
    return prepared, resolver.matched


def names_only(body: SearchBody) -> bool:
    """Whether every query names only tokens, ids and texts: then it has one answer per table
    load (a text's split is fixed by the tokenizer loaded with the table)."""
    queries: Sequence[Query] = body.queries if isinstance(body, BATCHES) else [body]
    return all(_names_only(query) for query in queries)


def _names_only(query: Query) -> bool:
    if isinstance(query, schemas.NeighborsRequest):
        return query.token is not None or query.id is not None or query.text is not None
    terms = [*query.positive, *query.negative]
    return all(isinstance(t, str) or t.token is not None or t.text is not None for t in terms)


def _prepare(resolver: Resolver, query: Query) -> Prepared:
    index = resolver.served.index
    if isinstance(query, schemas.NeighborsRequest):
        return index.prepare(resolver.neighbor_query(query))
    return index.prepare_analogy(resolver.analogy_query(query))

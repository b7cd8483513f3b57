"""Answering neighbour and analogy requests: resolve, plan, search in the shared batcher.

A request is walked once: its tokens and texts are gathered in one pass (Names), which also
decides whether resolving runs on a worker thread; every query is then planned by the engine
(analogies of a request together, in the engine's batch form) into one SearchItem each, whose
cost the request's limit and the batcher both read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.engine.errors import InvalidQuery
from service.engine.search.among import among_of
from service.engine.search.cosine import Plan, SearchItem
from service.engine.search.queries import Among, CosmulQuery, Neighbors
from service.engine.tables.table import EmbeddingTable
from service.operations.answers import dumps, neighbor_list
from service.operations.context import Context
from service.operations.resolving import Resolver, TextName, texts_of, tokens_of
from service.schemas.common import MatchedNames
from service.schemas.search import (
    AnalogyBatchRequest,
    AnalogyRequest,
    NeighborsBatchRequest,
    NeighborsRequest,
    SingleNeighborsRequest,
)

SearchRequest = NeighborsRequest | AnalogyRequest
BATCHES = (NeighborsBatchRequest, AnalogyBatchRequest)
SearchBody = NeighborsRequest | NeighborsBatchRequest | AnalogyRequest | AnalogyBatchRequest


# Requests naming more tokens than this are resolved and planned on a worker thread: a batch
# of 256 analogies with 1,000 exclusions each took 0.3 s, which the event loop cannot give.
ON_LOOP_TOKENS = 64

# Answers of more neighbours than this are written on a worker thread: 256 lists of 128 took
# about 45 ms of Python (the tokens gathered, a dict each, orjson).
ON_LOOP_RESULTS = 2048


@dataclass(frozen=True)
class Names:
    """Every token and text a request names, gathered in one walk over its queries."""

    tokens: list[str]
    texts: list[TextName]

    @classmethod
    def of(cls, queries: Sequence[SearchRequest]) -> Names:
        """The names of `queries`."""
        tokens: list[str] = []
        texts: list[TextName] = []
        for query in queries:
            tokens += tokens_of(query)
            texts += texts_of(query)
        return cls(tokens, texts)

    @property
    def off_the_loop(self) -> bool:
        """Many tokens, or any text (splitting takes about 0.75 us a character)."""
        return bool(self.texts) or len(self.tokens) > ON_LOOP_TOKENS


async def search(body: SearchBody, context: Context) -> bytes:
    """The JSON answer to a neighbour or analogy request, single or batch."""
    batch = isinstance(body, BATCHES)
    # Its size, like each query's exclusions, was checked before validation (door.check_configured).
    queries: Sequence[SearchRequest] = body.queries if isinstance(body, BATCHES) else [body]
    names = Names.of(queries)
    among = candidate_set(body, context)
    if names.off_the_loop:
        planned = await context.runtime.in_thread(plan_all, queries, names, context, among)
    else:
        planned = plan_all(queries, names, context, among)
    items, matched, most_results = planned
    results = await context.runtime.search.submit_many(items)
    check_finite(items, results)
    if most_results > ON_LOOP_RESULTS:
        return await context.runtime.in_thread(
            neighbors_json, context.served.table, results, matched, batch
        )
    return neighbors_json(context.served.table, results, matched, batch)


def plan_all(
    queries: Sequence[SearchRequest], names: Names, context: Context, among: Among | None = None
) -> tuple[list[SearchItem], MatchedNames, int]:
    """Every query resolved, checked against the limits and planned for the batcher (neighbour
    queries among the candidate set, when the request names one); the most results they ask."""
    resolver = Resolver(context.served, context.limits).resolve(names.tokens, names.texts)
    search = context.served.search
    items = [SearchItem.of(search, plan) for plan in _plans(resolver, queries, among)]
    most_results = sum(item.plan.k for item in items)
    context.limits.check_results(most_results)
    context.limits.check_directions(sum(item.cost for item in items))
    return items, resolver.matched, most_results


def check_finite(items: Sequence[SearchItem], results: Sequence[Neighbors]) -> None:
    """InvalidQuery for an answer JSON cannot carry: a 3CosMul objective at a pole (a raw
    vector as given makes a row's denominator exactly 0) or past float64's range."""
    for item, result in zip(items, results, strict=True):
        given = isinstance(item.plan, CosmulQuery) and item.plan.scales is not None
        if given and not np.isfinite(result.scores).all():
            row = int(result.ids[np.argmin(np.isfinite(result.scores))])
            raise InvalidQuery(
                f"the 3CosMul objective of row {row} is not finite: with raw vectors as "
                "given, its denominator is 0 (or the product is past float64's range)"
            )


def candidate_set(body: SearchBody, context: Context) -> Among | None:
    """The request's candidate set (`among`), checked against max_among and the table's ids."""
    ids = body.among if isinstance(body, SingleNeighborsRequest | NeighborsBatchRequest) else None
    if ids is None:
        return None
    context.limits.check_among(len(ids))
    return among_of(context.served.table, ids)


def _plans(resolver: Resolver, queries: Sequence[SearchRequest], among: Among | None) -> list[Plan]:
    """The engine's plan of each query, in order; a request's analogies planned together."""
    search = resolver.served.search
    analogies = [(i, query) for i, query in enumerate(queries) if isinstance(query, AnalogyRequest)]
    planned: dict[int, Plan] = {}
    if analogies:
        plans = search.plan_analogies([resolver.analogy_query(query) for _, query in analogies])
        planned.update(zip((i for i, _ in analogies), plans, strict=True))
    return [
        planned[i]
        if isinstance(query, AnalogyRequest)
        else search.plan(resolver.neighbor_query(query, among))
        for i, query in enumerate(queries)
    ]


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


def neighbors_json(
    table: EmbeddingTable, results: Sequence[Neighbors], matched: MatchedNames, batch: bool
) -> bytes:
    """The neighbours (or batch) response body."""
    if batch:
        lists = [{"neighbors": neighbor_list(table, result)} for result in results]
        return dumps({"matched": matched, "results": lists})
    return dumps({"matched": matched, "neighbors": neighbor_list(table, results[0])})

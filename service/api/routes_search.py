"""Search routes: cosine neighbours and analogies, batched across requests.

Answers to token-keyed queries are marked cacheable; ResponseCacheMiddleware stores them and
replays them for the same request body until the table is reloaded.
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, Request, Response

from service import schemas
from service.api.answers import json_response, neighbors_body
from service.api.deps import RuntimeDep, SettingsDep, TableDep
from service.api.resolve import Resolver, tokens_of
from service.api.response_cache import CACHEABLE
from service.api.routing import OrjsonRoute
from service.engine.index import Prepared

router = APIRouter(prefix="/v1/tables/{table}", tags=["search"], route_class=OrjsonRoute)

RESPONSES = schemas.NeighborsResponse | schemas.NeighborsBatchResponse
Query = schemas.NeighborsRequest | schemas.AnalogyRequest


@router.post("/neighbors", response_model=RESPONSES)
async def neighbors(
    body: schemas.NeighborsBody,
    request: Request,
    served: TableDep,
    settings: SettingsDep,
    runtime: RuntimeDep,
) -> Response:
    """Top-k cosine neighbours of a token, an id or a raw vector (or a batch of such queries)."""
    queries = body.queries if isinstance(body, schemas.NeighborsBatchRequest) else [body]
    request.scope[CACHEABLE] = all(query.vector is None for query in queries)
    resolver = Resolver(served, settings)
    results = await _search(resolver, runtime, queries)
    batch = isinstance(body, schemas.NeighborsBatchRequest)
    return json_response(neighbors_body(served.table, results, resolver.matched, batch))


@router.post("/analogy", response_model=RESPONSES)
async def analogy(
    body: schemas.AnalogyBody,
    request: Request,
    served: TableDep,
    settings: SettingsDep,
    runtime: RuntimeDep,
) -> Response:
    """Analogies (gensim most_similar / most_similar_cosmul semantics); inputs never answer."""
    queries = body.queries if isinstance(body, schemas.AnalogyBatchRequest) else [body]
    request.scope[CACHEABLE] = all(_tokens_only(query) for query in queries)
    resolver = Resolver(served, settings)
    results = await _search(resolver, runtime, queries)
    batch = isinstance(body, schemas.AnalogyBatchRequest)
    return json_response(neighbors_body(served.table, results, resolver.matched, batch))


async def _search(resolver: Resolver, runtime: RuntimeDep, queries: Sequence[Query]) -> list:
    """Resolve every token at once, prepare each query, and run them in the shared batcher."""
    resolver.batch(len(queries))
    resolver.resolve(token for query in queries for token in tokens_of(query))
    prepared = [_prepare(resolver, query) for query in queries]
    index = resolver.served.index
    return await runtime.search.submit_many([(index, query) for query in prepared])


def _prepare(resolver: Resolver, query: Query) -> Prepared:
    index = resolver.served.index
    if isinstance(query, schemas.NeighborsRequest):
        return index.prepare(resolver.neighbor_query(query))
    return index.prepare_analogy(resolver.analogy_query(query))


def _tokens_only(query: schemas.AnalogyRequest) -> bool:
    terms = [*query.positive, *query.negative]
    return all(isinstance(t, str) or t.vector is None for t in terms)

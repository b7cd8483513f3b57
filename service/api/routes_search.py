"""Search routes: cosine neighbours and analogies, batched across requests.

Answers to token-keyed queries are marked cacheable; ResponseCacheMiddleware stores them and
replays them for the same request body until the table is reloaded.
"""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, Request, Response
from starlette.types import Scope

from service import schemas
from service.api.answers import json_response, neighbors_body
from service.api.deps import RuntimeDep, SettingsDep, TableDep
from service.api.resolve import Resolver, tokens_of
from service.api.response_cache import CACHEABLE
from service.api.routing import OrjsonRoute
from service.config import Settings
from service.engine.index import Prepared
from service.engine.registry import ServedTable
from service.runtime import Runtime

router = APIRouter(prefix="/v1/tables/{table}", tags=["search"], route_class=OrjsonRoute)

RESPONSES = schemas.NeighborsResponse | schemas.NeighborsBatchResponse
Query = schemas.NeighborsRequest | schemas.AnalogyRequest
BATCHES = (schemas.NeighborsBatchRequest, schemas.AnalogyBatchRequest)
Body = (
    schemas.NeighborsRequest
    | schemas.NeighborsBatchRequest
    | schemas.AnalogyRequest
    | schemas.AnalogyBatchRequest
)


@router.post("/neighbors", response_model=RESPONSES)
async def neighbors(
    body: schemas.NeighborsBody,
    request: Request,
    served: TableDep,
    settings: SettingsDep,
    runtime: RuntimeDep,
) -> Response:
    """Top-k cosine neighbours of a token, an id or a raw vector (or a batch of such queries)."""
    return json_response(await answer(body, request.scope, served, settings, runtime))


@router.post("/analogy", response_model=RESPONSES)
async def analogy(
    body: schemas.AnalogyBody,
    request: Request,
    served: TableDep,
    settings: SettingsDep,
    runtime: RuntimeDep,
) -> Response:
    """Analogies (gensim most_similar / most_similar_cosmul semantics); inputs never answer."""
    return json_response(await answer(body, request.scope, served, settings, runtime))


async def answer(
    body: Body, scope: Scope, served: ServedTable, settings: Settings, runtime: Runtime
) -> bytes:
    """The response body of a validated neighbour or analogy request; marks token-keyed
    queries cacheable in `scope`. The routes and the fast lane (fast_lane.py) both answer here."""
    batch = isinstance(body, BATCHES)
    queries: Sequence[Query] = body.queries if isinstance(body, BATCHES) else [body]
    scope[CACHEABLE] = all(_cacheable(query) for query in queries)
    resolver = Resolver(served, settings)
    results = await _search(resolver, runtime, queries)
    return neighbors_body(served.table, results, resolver.matched, batch)


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


def _cacheable(query: Query) -> bool:
    """Whether the query names only tokens (and ids): one answer per load of the table."""
    if isinstance(query, schemas.NeighborsRequest):
        return query.vector is None
    terms = [*query.positive, *query.negative]
    return all(isinstance(t, str) or t.vector is None for t in terms)

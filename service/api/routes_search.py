"""Search routes: cosine neighbours and analogies, batched across requests and cached."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from fastapi import APIRouter, Response
from pydantic import BaseModel

from service import schemas
from service.api.answers import json_response, neighbors_body
from service.api.deps import RuntimeDep, SettingsDep, TableDep
from service.api.resolve import Resolver, tokens_of
from service.api.routing import OrjsonRoute
from service.config import Settings
from service.engine.index import Prepared
from service.engine.registry import ServedTable
from service.runtime import Runtime

router = APIRouter(prefix="/v1/tables/{table}", tags=["search"], route_class=OrjsonRoute)

RESPONSES = schemas.NeighborsResponse | schemas.NeighborsBatchResponse


@router.post("/neighbors", response_model=RESPONSES)
async def neighbors(
    body: schemas.NeighborsBody, served: TableDep, settings: SettingsDep, runtime: RuntimeDep
) -> Response:
    """Top-k cosine neighbours of a token, an id or a raw vector (or a batch of such queries)."""
    queries = body.queries if isinstance(body, schemas.NeighborsBatchRequest) else [body]
    batch = isinstance(body, schemas.NeighborsBatchRequest)
    key = _cache_key("neighbors", served, body, all(q.vector is None for q in queries))
    return await _answer(runtime, served, settings, key, queries, batch)


@router.post("/analogy", response_model=RESPONSES)
async def analogy(
    body: schemas.AnalogyBody, served: TableDep, settings: SettingsDep, runtime: RuntimeDep
) -> Response:
    """Analogies (gensim most_similar / most_similar_cosmul semantics); inputs never answer."""
    queries = body.queries if isinstance(body, schemas.AnalogyBatchRequest) else [body]
    batch = isinstance(body, schemas.AnalogyBatchRequest)
    key = _cache_key("analogy", served, body, all(_tokens_only(q) for q in queries))
    return await _answer(runtime, served, settings, key, queries, batch)


Query = schemas.NeighborsRequest | schemas.AnalogyRequest


async def _answer(
    runtime: Runtime,
    served: ServedTable,
    settings: Settings,
    key: Hashable | None,
    queries: Sequence[Query],
    batch: bool,
) -> Response:
    """Serve from the cache, or resolve, batch, serialise and remember."""
    operation = "neighbors" if isinstance(queries[0], schemas.NeighborsRequest) else "analogy"
    key = key if runtime.cache.enabled else None
    if key is not None and (cached := runtime.cache.get(operation, key)) is not None:
        return json_response(cached)
    resolver = Resolver(served, settings)
    resolver.batch(len(queries))
    resolver.resolve(token for query in queries for token in tokens_of(query))
    prepared = [_prepare(resolver, query) for query in queries]
    results = await runtime.search.submit_many([(served.index, p) for p in prepared])
    body = neighbors_body(served.table, results, resolver.matched, batch)
    if key is not None:
        runtime.cache.put(key, body)
    return json_response(body)


def _prepare(resolver: Resolver, query: Query) -> Prepared:
    index = resolver.served.index
    if isinstance(query, schemas.NeighborsRequest):
        return index.prepare(resolver.neighbor_query(query))
    return index.prepare_analogy(resolver.analogy_query(query))


def _tokens_only(query: schemas.AnalogyRequest) -> bool:
    terms = [*query.positive, *query.negative]
    return all(isinstance(t, str) or t.vector is None for t in terms)


def _cache_key(
    operation: str, served: ServedTable, body: BaseModel, token_keyed: bool
) -> Hashable | None:
    """Token-keyed answers are fixed for one load of a table; vector queries are not cached."""
    if not token_keyed:
        return None
    return (operation, served.name, served.loaded_at, body.model_dump_json())

"""Vector routes: lookup, pairwise similarity and output scoring."""

from __future__ import annotations

from typing import Any

import numpy as np
from fastapi import APIRouter, Response

from service import schemas
from service.api.answers import dumps, json_response, scores_body
from service.api.deps import RuntimeDep, SettingsDep, TableDep
from service.api.resolve import Resolver
from service.api.routing import OrjsonRoute
from service.engine.queries import ScoreQuery
from service.engine.registry import ServedTable
from service.engine.scoring import prepare_score
from service.metrics import timed

router = APIRouter(prefix="/v1/tables/{table}", tags=["vectors"], route_class=OrjsonRoute)


@router.post("/lookup", response_model=schemas.LookupResponse)
def lookup(body: schemas.LookupRequest, served: TableDep, settings: SettingsDep) -> Response:
    """Token -> id + raw vector, or id -> token + raw vector, for a batch of keys."""
    resolver = Resolver(served, settings)
    with timed("lookup"):
        if body.tokens is not None:
            resolver.batch(len(body.tokens))
            rows = resolver.resolve(body.tokens).row_array(body.tokens)
        else:
            rows = served.table.check_ids(resolver.batch_of(body.ids or []))
        items = [_lookup_item(served, row, body.include_vector) for row in rows.tolist()]
    return json_response(dumps({"matched": resolver.matched, "items": items}))


def _lookup_item(served: ServedTable, row: int, include_vector: bool) -> dict[str, Any]:
    table = served.table
    item: dict[str, Any] = {"token": table.tokens[row], "id": row, "norm": float(table.norms[row])}
    if include_vector:
        item["vector"] = table.vectors[row].tolist()
    item["metadata"] = table.metadata_of(row)
    return item


@router.post("/similarity", response_model=schemas.SimilarityResponse)
def similarity(
    body: schemas.SimilarityRequest, served: TableDep, settings: SettingsDep
) -> Response:
    """Cosine of token pairs, or the cosine matrix of a list of tokens."""
    resolver = Resolver(served, settings)
    if body.pairs is not None:
        resolver.batch(len(body.pairs))
        resolver.resolve(token for pair in body.pairs for token in pair)
        left = resolver.row_array([a for a, _ in body.pairs])
        right = resolver.row_array([b for _, b in body.pairs])
        with timed("similarity"):
            scores = served.index.similarity(left, right).tolist()
        pairs = [{"tokens": p, "score": s} for p, s in zip(body.pairs, scores, strict=True)]
        return json_response(dumps({"matched": resolver.matched, "pairs": pairs}))
    assert body.tokens is not None
    resolver.matrix_size(resolver.batch(len(body.tokens)))
    rows = resolver.resolve(body.tokens).row_array(body.tokens)
    with timed("similarity"):
        matrix = served.index.similarity_matrix(rows).tolist()
    payload = {"matched": resolver.matched, "tokens": body.tokens, "matrix": matrix}
    return json_response(dumps(payload))


@router.post("/score", response_model=schemas.ScoreResponse)
async def score(
    body: schemas.ScoreRequest, served: TableDep, settings: SettingsDep, runtime: RuntimeDep
) -> Response:
    """Raw dot product of a vector with every row (a tied output layer): top-k and a target."""
    resolver = Resolver(served, settings)
    target = resolver.resolve([body.target]).row(body.target) if body.target else None
    query = ScoreQuery(
        vector=np.asarray(body.vector, dtype=np.float32),
        k=resolver.k(body.k),
        softmax=body.softmax,
        temperature=body.temperature,
        target=target,
    )
    scores = await runtime.score.submit((served.index, prepare_score(served.index, query)))
    return json_response(scores_body(served.table, scores, resolver.matched))

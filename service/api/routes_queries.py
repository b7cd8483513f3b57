"""Query routes: lookup, neighbours, analogies, similarity, output scoring."""

from __future__ import annotations

import numpy as np
from fastapi import APIRouter

from service import schemas
from service.api.deps import SettingsDep, TableDep
from service.api.resolve import Resolver, tokens_of
from service.metrics import timed

router = APIRouter(prefix="/v1/tables/{table}", tags=["queries"])


@router.post("/lookup", response_model_exclude_none=True)
def lookup(
    body: schemas.LookupRequest, served: TableDep, settings: SettingsDep
) -> schemas.LookupResponse:
    """Token -> id + raw vector, or id -> token + raw vector, for a batch of keys."""
    resolver = Resolver(served, settings)
    with timed("lookup"):
        if body.tokens is not None:
            resolver.batch(len(body.tokens))
            rows = resolver.resolve(body.tokens).row_array(body.tokens)
        else:
            rows = served.table.check_ids(resolver.batch_of(body.ids or []))
        items = [_lookup_item(served, int(row), body.include_vector) for row in rows]
    return schemas.LookupResponse(items=items, matched=resolver.matched)


def _lookup_item(served: TableDep, row: int, include_vector: bool) -> schemas.LookupItem:
    table = served.table
    return schemas.LookupItem(
        token=table.tokens[row],
        id=row,
        norm=float(table.norms[row]),
        vector=table.vectors[row].tolist() if include_vector else None,
        metadata=table.metadata_of(row),
    )


@router.post("/neighbors")
def neighbors(
    body: schemas.NeighborsBody,
    served: TableDep,
    settings: SettingsDep,
) -> schemas.NeighborsResponse | schemas.NeighborsBatchResponse:
    """Top-k cosine neighbours of a token, an id or a raw vector (or a batch of such queries)."""
    queries = body.queries if isinstance(body, schemas.NeighborsBatchRequest) else [body]
    resolver = Resolver(served, settings)
    resolver.batch(len(queries))
    resolver.resolve(token for query in queries for token in tokens_of(query))
    engine_queries = [resolver.neighbor_query(query) for query in queries]
    with timed("neighbors"):
        results = served.index.neighbors(engine_queries)
    if isinstance(body, schemas.NeighborsRequest):
        return schemas.NeighborsResponse(
            neighbors=resolver.neighbor_list(results[0]), matched=resolver.matched
        )
    return schemas.NeighborsBatchResponse(
        results=[schemas.NeighborList(neighbors=resolver.neighbor_list(r)) for r in results],
        matched=resolver.matched,
    )


@router.post("/analogy")
def analogy(
    body: schemas.AnalogyBody,
    served: TableDep,
    settings: SettingsDep,
) -> schemas.NeighborsResponse | schemas.NeighborsBatchResponse:
    """Analogies (gensim most_similar / most_similar_cosmul semantics); inputs never answer."""
    queries = body.queries if isinstance(body, schemas.AnalogyBatchRequest) else [body]
    resolver = Resolver(served, settings)
    resolver.batch(len(queries))
    resolver.resolve(token for query in queries for token in tokens_of(query))
    engine_queries = [resolver.analogy_query(query) for query in queries]
    with timed("analogy"):
        results = served.index.analogies(engine_queries)
    if isinstance(body, schemas.AnalogyRequest):
        return schemas.NeighborsResponse(
            neighbors=resolver.neighbor_list(results[0]), matched=resolver.matched
        )
    return schemas.NeighborsBatchResponse(
        results=[schemas.NeighborList(neighbors=resolver.neighbor_list(r)) for r in results],
        matched=resolver.matched,
    )


@router.post("/similarity", response_model_exclude_none=True)
def similarity(
    body: schemas.SimilarityRequest, served: TableDep, settings: SettingsDep
) -> schemas.SimilarityResponse:
    """Cosine of token pairs, or the cosine matrix of a list of tokens."""
    resolver = Resolver(served, settings)
    if body.pairs is not None:
        resolver.batch(len(body.pairs))
        left = resolver.resolve(a for a, _ in body.pairs).row_array([a for a, _ in body.pairs])
        right = resolver.resolve(b for _, b in body.pairs).row_array([b for _, b in body.pairs])
        with timed("similarity"):
            scores = served.index.similarity(left, right).tolist()
        pairs = [
            schemas.PairScore(tokens=p, score=s) for p, s in zip(body.pairs, scores, strict=True)
        ]
        return schemas.SimilarityResponse(pairs=pairs, matched=resolver.matched)
    assert body.tokens is not None
    resolver.batch(len(body.tokens))
    resolver.matrix_size(len(body.tokens))
    rows = resolver.resolve(body.tokens).row_array(body.tokens)
    with timed("similarity"):
        matrix = served.index.similarity_matrix(rows).tolist()
    return schemas.SimilarityResponse(tokens=body.tokens, matrix=matrix, matched=resolver.matched)


@router.post("/score", response_model_exclude_none=True)
def score(
    body: schemas.ScoreRequest, served: TableDep, settings: SettingsDep
) -> schemas.ScoreResponse:
    """Raw dot product of a vector with every row (a tied output layer): top-k and a target."""
    resolver = Resolver(served, settings)
    target = resolver.resolve([body.target]).row(body.target) if body.target else None
    with timed("score"):
        scores = served.index.score(
            np.asarray(body.vector, dtype=np.float32),
            resolver.k(body.k),
            softmax=body.softmax,
            temperature=body.temperature,
            target=target,
        )
    tokens = served.table.tokens
    probabilities = scores.probabilities.tolist() if scores.probabilities is not None else None
    top = [
        schemas.ScoredToken(
            token=tokens[row],
            id=row,
            logit=logit,
            probability=None if probabilities is None else probabilities[i],
        )
        for i, (row, logit) in enumerate(
            zip(scores.ids.tolist(), scores.logits.tolist(), strict=True)
        )
    ]
    target_score = None
    if target is not None:
        assert scores.target_rank is not None and scores.target_logit is not None
        target_score = schemas.TargetScore(
            token=tokens[target],
            id=target,
            logit=scores.target_logit,
            probability=scores.target_probability,
            rank=scores.target_rank,
        )
    return schemas.ScoreResponse(
        top=top, target=target_score, log_partition=scores.log_partition, matched=resolver.matched
    )

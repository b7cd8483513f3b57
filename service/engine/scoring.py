"""Output-layer scoring: the raw dot product of vectors with every unnormalised row.

This is how a language model with tied embeddings scores the next token. Candidates come from
one float32 matrix product for the whole batch; the reported logits are recomputed in float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.errors import InvalidQuery
from service.engine.index import SimilarityIndex
from service.engine.kernels import RESCORE_MARGIN, float32_dot_error
from service.engine.queries import ScoreQuery, Scores
from service.engine.topk import candidate_rows


def prepare_score(index: SimilarityIndex, query: ScoreQuery) -> ScoreQuery:
    """Validate a scoring query (width, temperature, target row)."""
    if not query.temperature > 0:
        raise InvalidQuery("temperature must be positive", temperature=query.temperature)
    if query.target is not None:
        index.table.check_ids([query.target])
    return ScoreQuery(
        vector=index.store.check_vector(query.vector).astype(np.float32),
        k=query.k,
        softmax=query.softmax,
        temperature=query.temperature,
        target=query.target,
    )


def score(index: SimilarityIndex, queries: Sequence[ScoreQuery]) -> list[Scores]:
    """Score prepared queries with one matrix product over the raw rows."""
    vectors = np.stack([query.vector for query in queries])
    logits = vectors @ index.table.vectors.T
    return [_score_one(index, q, row) for q, row in zip(queries, logits, strict=True)]


def _score_one(index: SimilarityIndex, query: ScoreQuery, logits: np.ndarray) -> Scores:
    depth = min(query.k + RESCORE_MARGIN, logits.size)
    table = index.table
    scale = float(np.sqrt(np.sum(np.square(query.vector, dtype=np.float64)))) * index.max_norm
    slack = float32_dot_error(table.width, scale)
    candidates = candidate_rows(logits[None, :], depth, slack)[0]
    exact = _exact_logits(index, candidates, query.vector)
    order = np.lexsort((candidates, -exact))[: query.k]
    top, top_logits = candidates[order].astype(np.int64), exact[order]
    log_z = _log_partition(logits, query.temperature) if query.softmax else None
    scores = Scores(
        ids=top,
        logits=top_logits,
        probabilities=None if log_z is None else np.exp(top_logits / query.temperature - log_z),
        log_partition=log_z,
    )
    return scores if query.target is None else _with_target(index, query, logits, scores)


def _exact_logits(index: SimilarityIndex, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """float64 logits, each summed on its own so it never depends on the other candidates."""
    raw = index.table.vectors[rows].astype(np.float64)
    return np.sum(raw * vector.astype(np.float64), axis=1)


def _log_partition(logits: np.ndarray, temperature: float) -> float:
    scaled = logits.astype(np.float64) / temperature
    peak = scaled.max()
    return float(peak + np.log(np.exp(scaled - peak).sum()))


def _with_target(
    index: SimilarityIndex, query: ScoreQuery, logits: np.ndarray, scores: Scores
) -> Scores:
    assert query.target is not None
    exact = float(_exact_logits(index, np.asarray([query.target]), query.vector)[0])
    rank = 1 + int((logits > logits[query.target]).sum())
    probability = None
    if scores.log_partition is not None:
        probability = float(np.exp(exact / query.temperature - scores.log_partition))
    return Scores(
        ids=scores.ids,
        logits=scores.logits,
        probabilities=scores.probabilities,
        log_partition=scores.log_partition,
        target_row=query.target,
        target_rank=rank,
        target_logit=exact,
        target_probability=probability,
    )

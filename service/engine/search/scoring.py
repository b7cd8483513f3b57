"""Output-layer scoring: the raw dot product of vectors with every unnormalised row.

This is how a language model scores the next token: against its output table when it has an
untied one (`lm_head`), else against the input rows themselves (tied embeddings). Candidates
come from one float32 matrix product for the whole batch; the reported logits are recomputed
in float64.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from service.engine.errors import InvalidQuery
from service.engine.search.cosine import CosineSearch, per_search
from service.engine.search.kernels import RESCORE_MARGIN, SCORES_BUDGET
from service.engine.search.products import float32_dot_error
from service.engine.search.queries import ScoreQuery, Scores
from service.engine.search.selection import candidate_rows

# Logits of at most half float32's largest value cannot overflow in the float32 product.
FLOAT32_SAFE = float(np.finfo(np.float32).max) / 2
# Scaled logits at most this large keep exp() and the log-sum-exp finite in float64.
SCALED_LOGIT_BOUND = 1e300


def plan_score(search: CosineSearch, query: ScoreQuery) -> ScoreQuery:
    """Validate a scoring query (width, temperature, target row, and finite answers)."""
    if not query.temperature > 0:
        raise InvalidQuery("temperature must be positive", temperature=query.temperature)
    if query.target is not None:
        search.table.check_ids([query.target])
    vector = search.store.check_vector(query.vector).astype(np.float32)
    _check_finite_answers(search, vector, query.temperature)
    return replace(query, vector=vector)


def _check_finite_answers(search: CosineSearch, vector: np.ndarray, temperature: float) -> None:
    """InvalidQuery unless every logit, probability and the log normaliser will be finite.

    |logit| <= |vector| * (largest row norm): below float32's range the products cannot
    overflow, and below 1e300 after dividing by the temperature the softmax stays finite.
    """
    bound = float(np.sqrt(np.sum(np.square(vector, dtype=np.float64)))) * search.scoring_max_norm
    if bound > FLOAT32_SAFE:
        raise InvalidQuery("the vector is too large: its logits could overflow float32")
    if bound / temperature > SCALED_LOGIT_BOUND:
        raise InvalidQuery(
            f"temperature {temperature:g} is too small for this vector: logits / temperature "
            "could overflow, so the softmax would not be finite",
            temperature=temperature,
        )


def score(search: CosineSearch, queries: Sequence[ScoreQuery]) -> list[Scores]:
    """Score prepared queries, a chunk of them per matrix product over the raw rows.

    A chunk's float32 logits stay within the scores budget whatever the table's size.
    """
    chunk = max(1, SCORES_BUDGET // (4 * search.table.rows))
    results: list[Scores] = []
    for start in range(0, len(queries), chunk):
        part = queries[start : start + chunk]
        logits = np.stack([query.vector for query in part]) @ search.table.scoring_rows.T
        results.extend(_score_one(search, q, row) for q, row in zip(part, logits, strict=True))
    return results


def _score_one(search: CosineSearch, query: ScoreQuery, logits: np.ndarray) -> Scores:
    depth = min(query.k + RESCORE_MARGIN, logits.size)
    table = search.table
    scale = (
        float(np.sqrt(np.sum(np.square(query.vector, dtype=np.float64)))) * search.scoring_max_norm
    )
    slack = float32_dot_error(table.width, scale)
    candidates = candidate_rows(logits[None, :], depth, slack, compiled=True)[0]
    exact = _exact_logits(search, candidates, query.vector)
    order = np.lexsort((candidates, -exact))[: query.k]
    top, top_logits = candidates[order].astype(np.int64), exact[order]
    target_logit = None
    if query.target is not None:
        target_logit = float(_exact_logits(search, np.asarray([query.target]), query.vector)[0])
    log_z = None
    if query.softmax:
        known = {int(row): value for row, value in zip(candidates, exact, strict=True)}
        if query.target is not None and target_logit is not None:
            known[query.target] = target_logit
        log_z = _log_partition(logits, known, query.temperature)
    scores = Scores(
        ids=top,
        logits=top_logits,
        probabilities=None if log_z is None else np.exp(top_logits / query.temperature - log_z),
        log_partition=log_z,
    )
    if query.target is None or target_logit is None:
        return scores
    return _with_target(query, logits, scores, target_logit)


def _exact_logits(search: CosineSearch, rows: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """float64 logits, each summed on its own so it never depends on the other candidates."""
    raw = search.table.scoring_rows[rows].astype(np.float64)
    return np.sum(raw * vector.astype(np.float64), axis=1)


def _log_partition(logits: np.ndarray, exact: dict[int, float], temperature: float) -> float:
    """log sum exp(logit / temperature) over every row, with the rows answered in float64.

    The answered rows (top candidates, target) use the exact logits the answer reports, so each
    reported probability is at most 1 however far the float32 logits of large vectors are off.
    """
    scaled = logits.astype(np.float64)
    rows = np.fromiter(exact, dtype=np.int64, count=len(exact))
    scaled[rows] = np.fromiter(exact.values(), dtype=np.float64, count=len(exact))
    scaled /= temperature
    peak = scaled.max()
    return float(peak + np.log(np.exp(scaled - peak).sum()))


def _with_target(query: ScoreQuery, logits: np.ndarray, scores: Scores, exact: float) -> Scores:
    assert query.target is not None
    rank = 1 + int((logits > logits[query.target]).sum())
    probability = None
    if scores.log_partition is not None:
        probability = float(np.exp(exact / query.temperature - scores.log_partition))
    return replace(
        scores,
        target_row=query.target,
        target_rank=rank,
        target_logit=exact,
        target_probability=probability,
    )


def score_items(items: Sequence[tuple[CosineSearch, ScoreQuery]]) -> list[Scores]:
    """Planned scoring queries that may belong to different tables: one product per table."""
    return per_search(items, score)

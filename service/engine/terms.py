"""Candidates for many analogies at once from shared term scores.

An analogy's direction is a weighted sum of a few unit table rows, and a large batch of
analogies (the Google set has ~19,500 questions over under a thousand words) names far fewer
distinct rows than it has queries. Scoring each distinct row once against the table and adding
each query's few columns replaces a (queries x width x rows) matrix product with a (terms x
width x rows) one plus cheap additions. The candidates then go through the same float64
rescoring as any search, so the answers are exactly those of the direct path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from service.engine.errors import ZeroVector
from service.engine.kernels import float32_dot_error
from service.engine.queries import AnalogyQuery, NeighborQuery, TermMix
from service.engine.topk import candidate_rows

if TYPE_CHECKING:
    from service.engine.index import SimilarityIndex

# Worth it only when the batch names at most this share of distinct rows per query.
MAX_TERMS_PER_QUERY = 0.5


def shares_terms(queries: Sequence[NeighborQuery]) -> bool:
    """Whether every query is a mix of table rows and they share enough of them."""
    mixes = [query.mix for query in queries]
    if len(mixes) < 8 or any(mix is None for mix in mixes):
        return False
    distinct = np.unique(np.concatenate([mix.rows for mix in mixes if mix is not None]))
    return distinct.size <= MAX_TERMS_PER_QUERY * len(mixes)


def candidates_by_terms(
    index: SimilarityIndex, queries: Sequence[NeighborQuery], depth: int, searchable: int
) -> list[np.ndarray]:
    """Per query, candidate positions from the weighted sums of shared term scores."""
    mixes = [query.mix for query in queries if query.mix is not None]
    rows = np.concatenate([mix.rows for mix in mixes])
    distinct, inverse = np.unique(rows, return_inverse=True)
    units = index.row_directions(distinct).astype(np.float32)
    term_scores = index.kernel.scores(units, searchable)
    combined = np.empty((len(mixes), searchable), dtype=np.float32)
    start = 0
    for i, mix in enumerate(mixes):
        columns = inverse[start : start + mix.rows.size]
        start += mix.rows.size
        _combine(term_scores, columns, mix, combined[i])
    # Each term score carries a float32 dot-product error, scaled by its weight; the sum adds
    # one rounding per term on top.
    error = float32_dot_error(index.table.width) + 2.0**-23
    slack = np.asarray([error * np.abs(mix.weights).sum() for mix in mixes])
    return candidate_rows(combined, depth, slack)


def _combine(term_scores: np.ndarray, columns: np.ndarray, mix: TermMix, out: np.ndarray) -> None:
    weights = mix.weights.astype(np.float32, copy=False)
    np.multiply(term_scores[columns[0]], weights[0], out=out)
    for column, weight in zip(columns[1:], weights[1:], strict=True):
        out += weight * term_scores[column]


def mean_directions(index: SimilarityIndex, queries: Sequence[AnalogyQuery]) -> list[NeighborQuery]:
    """gensim's weighted means of analogies whose terms are all table rows, computed at once."""
    terms = [query.positive + query.negative for query in queries]
    row_list = [cast(int, term.row) for group in terms for term in group]  # all rows (caller)
    rows = np.asarray(row_list, dtype=np.int64)
    weights = np.asarray(
        [
            (1.0 if i < len(query.positive) else -1.0) * term.weight
            for query, group in zip(queries, terms, strict=True)
            for i, term in enumerate(group)
        ]
    )
    starts = np.cumsum([0] + [len(group) for group in terms[:-1]])
    means = np.add.reduceat(index.row_directions(rows) * weights[:, None], starts, axis=0)
    norms = np.sqrt(np.sum(means * means, axis=1))
    if not (norms > 0).all():
        raise ZeroVector("the weighted mean of the analogy terms")
    directions = means / norms[:, None]
    # The candidate pass combines term scores in float32: convert the weights once here.
    mixed = (weights / np.repeat(norms, [len(group) for group in terms])).astype(np.float32)
    ends = [*starts[1:].tolist(), rows.size]
    return [
        NeighborQuery(
            directions[i],
            query.k,
            frozenset(row_list[start:end]).union(query.exclude),
            query.restrict,
            TermMix(rows[start:end], mixed[start:end]),
        )
        for i, (query, start, end) in enumerate(zip(queries, starts.tolist(), ends, strict=True))
    ]

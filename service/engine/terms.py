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
from typing import TYPE_CHECKING

import numpy as np

from service.engine.kernels import float32_dot_error
from service.engine.queries import NeighborQuery, TermMix
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
    np.multiply(term_scores[columns[0]], np.float32(mix.weights[0]), out=out)
    for column, weight in zip(columns[1:], mix.weights[1:], strict=True):
        out += np.float32(weight) * term_scores[column]

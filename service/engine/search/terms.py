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
from typing import cast

import numpy as np

from service.engine.errors import ZeroVector
from service.engine.search.kernels import SCORES_BUDGET, Kernel, mask, mask_rows, with_always
from service.engine.search.queries import AnalogyQuery, NeighborQuery, TermMix
from service.engine.search.selection import candidate_rows
from service.engine.search.store import RowStore

# Worth it only for batches of at least this many queries (the search asks no smaller one)...
SHARED_BATCH = 8
# ... and only when the batch names at most this share of distinct rows per query.
MAX_TERMS_PER_QUERY = 0.5
# Queries whose sums are selected together. The Google analogy set's batch path spent 35 ms per
# 1,024 questions summing all of them before selecting, 20 ms in chunks of 32 (13.5 ms adding and
# subtracting instead of multiplying); 16 and 64 were no better than 32.
CHUNK = 32


def shares_terms(queries: Sequence[NeighborQuery], searchable: int) -> bool:
    """Whether every query of a batch (of SHARED_BATCH or more: the search asks no smaller one)
    is a mix of table rows, they share enough of them, and the distinct rows' scores fit in the
    scores budget (else the direct pass, which scores in blocks)."""
    mixes = [query.mix for query in queries]
    if any(mix is None for mix in mixes):
        return False
    distinct = np.unique(np.concatenate([mix.rows for mix in mixes if mix is not None]))
    fits = 4 * distinct.size * searchable <= SCORES_BUDGET
    return fits and distinct.size <= MAX_TERMS_PER_QUERY * len(mixes)


def candidates_by_terms(
    store: RowStore,
    kernel: Kernel,
    queries: Sequence[NeighborQuery],
    depth: int,
    searchable: int,
    excluded: Sequence[np.ndarray],
) -> list[np.ndarray]:
    """Per query, candidate positions from the weighted sums of shared term scores, its
    excluded positions left out."""
    mixes = [query.mix for query in queries if query.mix is not None]
    rows = np.concatenate([mix.rows for mix in mixes])
    distinct, inverse = np.unique(rows, return_inverse=True)
    units = store.directions(distinct).astype(np.float32)
    term_scores = kernel.scores(units, 0, searchable)
    # Each term score carries the kernel's error, scaled by its weight; the sum adds one
    # rounding per term on top.
    error = kernel.error + 2.0**-23
    sums = _Sums(term_scores, inverse, mixes)
    combined = np.empty((min(CHUNK, len(mixes)), searchable), dtype=np.float32)
    found: list[np.ndarray] = []
    for first in range(0, len(mixes), CHUNK):
        count = min(CHUNK, len(mixes) - first)
        slack = [error * sums.into(first + i, combined[i]) for i in range(count)]
        mask(combined[:count], excluded[first : first + count], 0)
        mask_rows(combined[:count], kernel.masked, 0)
        # Selected while the chunk's sums are still in cache.
        found.extend(candidate_rows(combined[:count], depth, np.asarray(slack), kernel.compiled))
    return with_always(found, kernel.always, searchable)


class _Sums:
    """Each query's weighted sum of term score rows, divided by some scale > 0.

    Dividing by a positive scale keeps a query's ranking, so candidates are selected on the
    scaled sum with the slack scaled alike. Terms of equal weight up to sign (every analogy
    with default weights) are added and subtracted; others are multiplied first.
    """

    def __init__(
        self, term_scores: np.ndarray, columns: np.ndarray, mixes: Sequence[TermMix]
    ) -> None:
        self.term_scores = term_scores
        self.weights = weights = np.concatenate([mix.weights for mix in mixes])
        self.bounds = np.cumsum([0] + [mix.rows.size for mix in mixes]).tolist()
        magnitude = np.abs(weights)
        starts = self.bounds[:-1]
        self.equal = (
            np.minimum.reduceat(magnitude, starts) == np.maximum.reduceat(magnitude, starts)
        ).tolist()
        self.magnitudes = np.add.reduceat(magnitude, starts).tolist()
        self.columns = columns.tolist()
        self.positive = (weights > 0).tolist()

    def into(self, query: int, out: np.ndarray) -> float:
        """Write query's scaled sum into `out`; returns its sum of |weights| / scale."""
        start, end = self.bounds[query], self.bounds[query + 1]
        if not self.equal[query]:
            self._weighted(start, end, out)
            return float(self.magnitudes[query])
        scores, columns, positive = self.term_scores, self.columns, self.positive
        terms = sorted(range(start, end), key=lambda term: not positive[term])  # positive first
        if positive[terms[0]]:
            np.copyto(out, scores[columns[terms[0]]])
        else:
            np.negative(scores[columns[terms[0]]], out=out)
        for term in terms[1:]:
            (np.add if positive[term] else np.subtract)(out, scores[columns[term]], out=out)
        return float(end - start)

    def _weighted(self, start: int, end: int, out: np.ndarray) -> None:
        scores, columns, weights = self.term_scores, self.columns, self.weights
        np.multiply(scores[columns[start]], weights[start], out=out)
        for term in range(start + 1, end):
            out += weights[term] * scores[columns[term]]


def mean_directions(store: RowStore, queries: Sequence[AnalogyQuery]) -> list[NeighborQuery]:
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
    distinct, inverse = np.unique(rows, return_inverse=True)  # each row normalised once
    units = store.directions(distinct)[inverse]
    means = _segment_sums(units * weights[:, None], starts, [len(group) for group in terms])
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
            query.input_rows(),
            query.restrict,
            TermMix(rows[start:end], mixed[start:end]),
            query.options,
        )
        for i, (query, start, end) in enumerate(zip(queries, starts.tolist(), ends, strict=True))
    ]


def _segment_sums(values: np.ndarray, starts: np.ndarray, counts: list[int]) -> np.ndarray:
    """Sums of consecutive row segments, each added strictly in order from its first row.

    A segment's sum never depends on the others in the batch: segments of one length are
    summed together, column by column. (np.add.reduceat paid per segment, 3.3 of 7.7 ms per
    1,024 three-term analogies, and does not add three or more rows in this order.)
    """
    if len(set(counts)) == 1:
        return _in_order(values.reshape(len(counts), counts[0], -1))
    sums = np.empty((len(counts), values.shape[1]))
    lengths = np.asarray(counts)
    for length in set(counts):
        members = np.flatnonzero(lengths == length)
        sums[members] = _in_order(values[starts[members, None] + np.arange(length)])
    return sums


def _in_order(grouped: np.ndarray) -> np.ndarray:
    """grouped[:, 0] + grouped[:, 1] + ..., added left to right."""
    total = grouped[:, 0].copy()
    for term in range(1, grouped.shape[1]):
        total += grouped[:, term]
    return total

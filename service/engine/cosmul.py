"""3CosMul analogies (Levy & Goldberg), with gensim's shift of cosines to [0, 1].

Every term is a unit vector, so each factor (1 + cosine) / 2 lies in [0, 1]. Candidates come
from the float32 cosines of the whole batch's terms; the objective of each candidate is then
recomputed from float64 cosines.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.engine.kernels import RESCORE_MARGIN, Kernel
from service.engine.queries import CosmulQuery, Neighbors
from service.engine.rows import RowStore
from service.engine.topk import candidate_rows

# gensim's most_similar_cosmul adds this to the denominator to avoid dividing by zero.
COSMUL_EPSILON = 1e-6
# Relative slack for 3CosMul candidates, far above the float32 error of its factors.
COSMUL_SLACK = 1e-4


def cosmul(store: RowStore, kernel: Kernel, queries: Sequence[CosmulQuery]) -> list[Neighbors]:
    """Answer 3CosMul queries: one pass scores every term of the batch against the rows."""
    terms = np.concatenate([q.terms for q in queries]).astype(np.float32)
    cosines = kernel.scores(terms, store.searchable(None)).T
    results, start = [], 0
    for query in queries:
        columns = cosines[:, start : start + len(query.terms)]
        start += len(query.terms)
        results.append(_cosmul_one(store, query, columns))
    return results


def _cosmul_one(store: RowStore, query: CosmulQuery, cosines: np.ndarray) -> Neighbors:
    searchable = store.searchable(query.restrict)
    objective = cosmul_objective(cosines[:searchable], query)
    ids = store.indexed[:searchable]
    objective[np.isin(ids, np.fromiter(query.exclude, dtype=np.int64))] = -np.inf
    depth = min(query.k + RESCORE_MARGIN, searchable)
    # The objective is a product of float32-derived factors; keep near-ties for rescoring.
    slack = COSMUL_SLACK * np.abs(objective).max(initial=0.0)
    candidates = candidate_rows(objective[None, :], depth, slack)[0] if depth else ids[:0]
    candidates = candidates[objective[candidates] > -np.inf]
    exact = cosmul_objective(store.cosines(ids[candidates], query.terms), query)
    order = np.lexsort((ids[candidates], -exact))[: query.k]
    return Neighbors(ids=ids[candidates][order], scores=exact[order])


def cosmul_objective(cosines: np.ndarray, query: CosmulQuery) -> np.ndarray:
    """Product of shifted positive cosines over (product of shifted negatives + epsilon)."""
    shifted = (1 + cosines.astype(np.float64)) / 2
    powered = shifted**query.exponents
    objective = np.prod(powered[:, : query.positives], axis=1)
    if query.positives < len(query.exponents):
        objective /= np.prod(powered[:, query.positives :], axis=1) + COSMUL_EPSILON
    return objective

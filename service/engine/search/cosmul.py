"""3CosMul analogies (Levy & Goldberg), with gensim's shift of cosines to [0, 1].

Every term is a unit vector, so each factor s = (1 + cosine) / 2 lies in [0, 1], and the
objective is prod(s_pos ** w) / (prod(s_neg ** w) + epsilon). It is ranked by its logarithm, so
that large weights (exponents) cannot underflow every row to a tie at 0.

Candidates come from float32 cosines, each known to within a rounding bound; from it every row
gets a lower and an upper bound of its log objective (the objective rises with each positive
cosine and falls with each negative one). The candidates are the rows whose upper bound reaches
the k-th largest lower bound: every row of the exact top k is among them, whatever the weights
and exclusions. They are then scored exactly in float64.

Work is bounded: a pass scores at most SCORES_BUDGET bytes of cosines at once (queries in chunks,
the rows in blocks), and each query keeps only its candidates between blocks.

A query whose raw vectors are taken as given (gensim's most_similar_cosmul) has factors that may
be negative: its bounds and ranking are cosmul_given.py's, in the same passes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from service.engine.search import cosmul_given
from service.engine.search.cosmul_given import COSMUL_EPSILON
from service.engine.search.kernels import Kernel, rows_per_block
from service.engine.search.queries import CosmulQuery, Neighbors
from service.engine.search.store import RowStore

LOG_EPSILON = float(np.log(COSMUL_EPSILON))
# Terms scored in one matrix product (more when one query alone has more).
TERMS_PER_PASS = 256
# Candidate rows scored exactly at once: 512 rows of 384 float64 are 1.5 MB.
RESCORE_ROWS = 512
# Rows bounded at once: a few float64 (terms x rows) temporaries, 0.5 MB each for 16 terms.
BOUND_ROWS = 4096


def cosmul(store: RowStore, kernel: Kernel, queries: Sequence[CosmulQuery]) -> list[Neighbors]:
    """Answer 3CosMul queries, a chunk of queries per pass over the rows."""
    results: list[Neighbors] = []
    for chunk in _chunks(queries):
        results.extend(_pass(store, kernel, chunk))
    return results


def _chunks(queries: Sequence[CosmulQuery]) -> Iterator[Sequence[CosmulQuery]]:
    start, terms = 0, 0
    for end, query in enumerate(queries):
        if end > start and terms + len(query.terms) > TERMS_PER_PASS:
            yield queries[start:end]
            start, terms = end, 0
        terms += len(query.terms)
    if start < len(queries):
        yield queries[start:]


def _pass(store: RowStore, kernel: Kernel, queries: Sequence[CosmulQuery]) -> list[Neighbors]:
    terms = np.concatenate([q.terms for q in queries]).astype(np.float32)
    limits = [store.searchable(q.restrict) for q in queries]
    excluded = [_excluded_rows(store, q) for q in queries]
    depths = [_depth(store, q, x) for q, x in zip(queries, excluded, strict=True)]
    error = kernel.error
    kept: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in queries]
    block = rows_per_block(len(terms), max(limits))
    for start in range(0, max(limits), block):
        stop = min(start + block, max(limits))
        cosines = kernel.scores(terms, start, stop)
        first = 0
        for i, query in enumerate(queries):
            rows = cosines[first : first + len(query.terms), : max(0, limits[i] - start)]
            first += len(query.terms)
            if rows.shape[1] and depths[i] > 0:
                kept[i].append(
                    _block_candidates(
                        query, rows, start, (excluded[i], kernel.always), depths[i], error
                    )
                )
    return [
        _exact(store, query, _merge(found, depth))
        for query, found, depth in zip(queries, kept, depths, strict=True)
    ]


def _excluded_rows(store: RowStore, query: CosmulQuery) -> np.ndarray:
    """The query's excluded rows and the zero rows, sorted."""
    rows = np.fromiter(query.exclude, dtype=np.int64, count=len(query.exclude))
    return np.union1d(rows, store.zero)


def _depth(store: RowStore, query: CosmulQuery, excluded: np.ndarray) -> int:
    """How many rows the query can get: rows with a direction within reach, not excluded."""
    limit = store.searchable(query.restrict)
    inside = excluded[excluded < limit]
    return min(query.k, store.directional(query.restrict) - int(np.count_nonzero(
        store.norms64[inside] > 0)))  # fmt: skip


def _block_candidates(
    query: CosmulQuery,
    cosines: np.ndarray,
    start: int,
    rows: tuple[np.ndarray, np.ndarray],
    depth: int,
    error: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(positions, lower, upper) of the block's rows that may be in the query's top `depth`.

    `rows`: the excluded rows (never candidates) and the rows whose float32 cosines are not
    to be trusted (always candidates), both sorted.
    """
    lower, upper = np.empty(cosines.shape[1]), np.empty(cosines.shape[1])
    for first in range(0, cosines.shape[1], BOUND_ROWS):
        part = slice(first, first + BOUND_ROWS)
        lower[part], upper[part] = objective_bounds(cosines[:, part], query, error)
    excluded, always = (_inside(r, start, cosines.shape[1]) for r in rows)
    lower[always], upper[always] = -np.inf, np.inf
    lower[excluded] = upper[excluded] = -np.inf
    keep = _reaching(lower, upper, depth)
    return keep + start, lower[keep], upper[keep]


def _inside(rows: np.ndarray, start: int, size: int) -> np.ndarray:
    """Sorted `rows` within start..start + size, relative to start."""
    return rows[np.searchsorted(rows, start) : np.searchsorted(rows, start + size)] - start


def _reaching(lower: np.ndarray, upper: np.ndarray, depth: int) -> np.ndarray:
    """Indices whose upper bound reaches the depth-th largest lower bound (-inf never does)."""
    if lower.size > depth:
        bound = np.partition(lower, lower.size - depth)[lower.size - depth]
        return np.flatnonzero((upper >= bound) & (upper > -np.inf))
    return np.flatnonzero(upper > -np.inf)


def _merge(found: list[tuple[np.ndarray, np.ndarray, np.ndarray]], depth: int) -> np.ndarray:
    """The positions kept by every block that may be in the top `depth` overall.

    A row dropped in its block had an upper bound below that block's depth-th lower bound, which
    is at most the overall depth-th lower bound: one pass over all rows would drop it too.
    """
    if not found:
        return np.empty(0, dtype=np.int64)
    positions, lower, upper = (np.concatenate(parts) for parts in zip(*found, strict=True))
    return positions[_reaching(lower, upper, depth)]


def objective_bounds(
    cosines: np.ndarray, query: CosmulQuery, error: float
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of each row's ranking key: the log objective, or the objective itself when raw
    vectors are taken as given."""
    if query.scales is not None:
        return cosmul_given.objective_bounds(cosines, query, error)
    return log_objective_bounds(cosines, query, error)


def log_objective_bounds(
    cosines: np.ndarray, query: CosmulQuery, error: float
) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of each row's log objective, given cosines (terms, rows) +- error.

    With s = (1 + cosine) / 2 known within h = error / 2, the mean value theorem bounds
    log(s + h) - log(s) by h / s and log(s) - log(s - h) by h / (s - h): one float32 logarithm
    per factor, plus a margin for its rounding, instead of two float64 ones.
    """
    shifted = (1 + cosines.astype(np.float32, copy=False)) * np.float32(0.5)
    half = np.float32(error / 2)
    safe = np.maximum(shifted, np.float32(1e-30))
    logs = np.log(safe)
    margin = np.float32(2.0**-20) * (1 + np.abs(logs))
    above = half / safe + margin
    with np.errstate(divide="ignore"):
        below = np.where(shifted > half, half / (shifted - half), np.float32(np.inf)) + margin
    weights = query.exponents
    positive = query.positives
    lower = weights[:positive] @ (logs[:positive] - below[:positive])
    upper = weights[:positive] @ (logs[:positive] + above[:positive])
    if positive < len(weights):
        low = weights[positive:] @ (logs[positive:] - below[positive:])
        high = weights[positive:] @ (logs[positive:] + above[positive:])
        upper -= np.logaddexp(low, LOG_EPSILON)
        lower -= np.logaddexp(high, LOG_EPSILON)
    return lower, upper


def _exact(store: RowStore, query: CosmulQuery, positions: np.ndarray) -> Neighbors:
    """The candidates' exact objectives from float64 cosines; best k by log objective, then id."""
    ids = positions
    cosines = np.empty((len(query.terms), ids.size))
    for start in range(0, ids.size, RESCORE_ROWS):
        part = slice(start, start + RESCORE_ROWS)
        raw = store.vectors[ids[part]].astype(np.float64)
        for term, direction in enumerate(query.terms):
            # Each dot product summed on its own: a score never depends on the other candidates.
            cosines[term, part] = np.sum(raw * direction, axis=1) / store.norms64[ids[part]]
    if query.scales is not None:
        objective = cosmul_given.objectives(cosines, query)
        order = np.lexsort((ids, -objective))[: query.k]  # NaN (0/0 at a pole) last
        return Neighbors(ids=ids[order], scores=objective[order])
    shifted = (1 + cosines) / 2
    weights = query.exponents[:, None]
    positive = query.positives
    with np.errstate(divide="ignore"):
        logs = weights * np.log(shifted)
    ranking = np.sum(logs[:positive], axis=0)
    objective = np.prod(shifted[:positive] ** weights[:positive], axis=0)
    if positive < len(query.exponents):
        ranking -= np.logaddexp(np.sum(logs[positive:], axis=0), LOG_EPSILON)
        objective /= np.prod(shifted[positive:] ** weights[positive:], axis=0) + COSMUL_EPSILON
    order = np.lexsort((ids, -ranking))[: query.k]
    return Neighbors(ids=ids[order], scores=objective[order])

"""Every row's score against one query, and ranks: how many rows score above a given one.

gensim's most_similar(topn=None), distances(key), rank and closer_than need a score for every
row, not a top k. A score here is the rescoring's float64 arithmetic (rescoring.py: a row's
float32 components times the float64 direction, summed along the row on their own, over the
row's norm), so row r scores exactly what /neighbors reports for r, whichever rows are asked
with it; a zero row scores NaN (0/0), as in gensim's arrays.

A rank needs a count, not the scores: one float32 kernel pass over the rows (a neighbour
query's), where only the rows whose float32 score lies within the kernel's error of the
compared score are scored exactly, so the count is the exact float64 one at the cost of a pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.engine.search.cosine import Plan
from service.engine.search.cosmul import COSMUL_EPSILON
from service.engine.search.kernels import Kernel, mask_rows
from service.engine.search.queries import CosmulQuery
from service.engine.search.rescoring import gather_rows
from service.engine.tables.rows import RowStore

# float64 rows held at once while scoring a range of rows (341 rows of 384): the copy, the
# products and their sums stay in the core's cache (measured faster than 4 MiB blocks).
BLOCK_BYTES = 2**20
# Rows of one float32 pass at once while ranking: their scores (4 MiB) and sort order (8 MiB).
RANK_BLOCK_ROWS = 2**20


def exact_cosines(store: RowStore, direction: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """float64 cosines of `rows` (ids) with a unit direction, as the rescoring computes them."""
    products = np.multiply(gather_rows(store.vectors, rows), direction, dtype=np.float64,
                           order="C")  # fmt: skip
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.add.reduce(products, axis=1) / store.norms64[rows]


def range_cosines(store: RowStore, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
    """(directions, stop - start) float64 cosines of rows start..stop, a block at a time;
    NaN for zero rows."""
    width = store.width
    block = max(1, BLOCK_BYTES // (8 * width))
    size = max(stop - start, 0)
    buffer = np.empty((min(block, size), width))
    products = np.empty_like(buffer)
    scores = np.empty((len(directions), size))
    for first in range(start, stop, block):
        last = min(first + block, stop)
        rows, product = buffer[: last - first], products[: last - first]
        rows[...] = store.vectors[first:last]  # float32 -> float64 exactly, laid out by rows
        for i, direction in enumerate(directions):
            np.multiply(rows, direction, out=product)
            np.add.reduce(product, axis=1, out=scores[i, first - start : last - start])
    with np.errstate(divide="ignore", invalid="ignore"):
        scores /= store.norms64[start:stop]
    return scores


def scores_of(store: RowStore, plan: Plan, start: int, stop: int) -> np.ndarray:
    """Every row's score from `start` to `stop` against a planned query: the cosine with a
    neighbour or 3CosAdd direction, or the 3CosMul objective; NaN for zero rows."""
    if isinstance(plan, CosmulQuery):
        return objectives(store, plan, start, stop)
    return range_cosines(store, plan.vector[None, :], start, stop)[0]


def objectives(store: RowStore, query: CosmulQuery, start: int, stop: int) -> np.ndarray:
    """The 3CosMul objective of rows start..stop, as the analogy's exact step computes it:
    prod(((1 + cos) / 2) ** w) over the positive terms / (the same over the negative + 1e-6)."""
    shifted = (1 + range_cosines(store, query.terms, start, stop)) / 2
    weights = query.exponents[:, None]
    positive = query.positives
    objective = np.prod(shifted[:positive] ** weights[:positive], axis=0)
    if positive < len(query.exponents):
        objective /= np.prod(shifted[positive:] ** weights[positive:], axis=0) + COSMUL_EPSILON
    return objective


@dataclass(frozen=True)
class Ranks:
    """Each compared row's cosine with the query (NaN for a zero row) and how many rows score
    strictly above it, the query's own row and zero rows never counted; when listed, those
    rows of the first compared row, in row order."""

    scores: np.ndarray
    closer: np.ndarray
    listed: np.ndarray | None = None


def ranks(
    store: RowStore,
    kernel: Kernel,
    direction: np.ndarray,
    compared: np.ndarray,
    query_row: int | None = None,
    listed: bool = False,
) -> Ranks:
    """How many rows score above each compared row against a unit direction: one float32
    pass, and the rows within the kernel's error of a compared score rescored exactly."""
    scores = exact_cosines(store, direction, np.asarray(compared, dtype=np.int64))
    count = _Count(store, direction, scores, listed)
    never = kernel.masked if query_row is None else np.union1d(kernel.masked, [query_row])
    unit = direction.astype(np.float32)[None, :]
    for start in range(0, store.rows, RANK_BLOCK_ROWS):
        stop = min(start + RANK_BLOCK_ROWS, store.rows)
        passed = mask_rows(kernel.scores(unit, start, stop), never, start)[0]
        count.block(passed, start, kernel.error)
    # Rows whose float32 scores are not to be trusted (tiny norms) are scored exactly.
    always = kernel.always if query_row is None else kernel.always[kernel.always != query_row]
    count.exactly(always)
    return Ranks(scores, count.closer, count.rows() if listed else None)


class _Count:
    """The counts of one ranking, block by block (and the first compared row's closer rows)."""

    def __init__(
        self, store: RowStore, direction: np.ndarray, scores: np.ndarray, listed: bool
    ) -> None:
        self.store = store
        self.direction = direction
        self.bounds = scores
        self.finite = np.flatnonzero(~np.isnan(scores))  # a NaN score has nothing above it
        self.closer = np.zeros(scores.size, dtype=np.int64)
        self.listed: list[np.ndarray] | None = [] if listed and 0 in self.finite else None

    def block(self, passed: np.ndarray, start: int, error: float) -> None:
        """Count a block's rows: above a bound by more than the float32 error, or within it
        and above by their exact score."""
        if not self.finite.size:
            return
        order = np.argsort(passed, kind="stable")
        ranked = passed[order]
        bounds = self.bounds[self.finite]
        low = np.searchsorted(ranked, bounds - error, side="left")
        high = np.searchsorted(ranked, bounds + error, side="right")
        self.closer[self.finite] += ranked.size - high
        near = [order[a:b] + start for a, b in zip(low.tolist(), high.tolist(), strict=True)]
        scored = np.unique(np.concatenate(near))
        exact = exact_cosines(self.store, self.direction, scored) if scored.size else scored
        for i, (target, rows) in enumerate(zip(self.finite.tolist(), near, strict=True)):
            above = rows[exact[np.searchsorted(scored, rows)] > bounds[i]]
            self.closer[target] += above.size
            if self.listed is not None and target == 0:
                self.listed += [order[high[0] :] + start, above]

    def exactly(self, rows: np.ndarray) -> None:
        """Count `rows` by their exact scores, for every compared row."""
        if not rows.size or not self.finite.size:
            return
        exact = exact_cosines(self.store, self.direction, rows)
        above = exact[None, :] > self.bounds[self.finite, None]
        self.closer[self.finite] += np.count_nonzero(above, axis=1)
        if self.listed is not None:
            self.listed.append(rows[above[0]])

    def rows(self) -> np.ndarray:
        """The first compared row's closer rows, in row order."""
        if not self.listed:
            return np.empty(0, dtype=np.int64)
        return np.sort(np.concatenate(self.listed))

"""Every row's score against one query, and ranks: how many rows score above a given one.

gensim's most_similar(topn=None), distances(key), rank and closer_than need a score for every
row, not a top k. A range of rows is scored in float64, each row's products added component by
component down the stored columns (range_cosines): the same bits whatever the page or layout,
within about 1e-16 of the score /neighbors reports for the row (the rescoring sums pairwise);
a zero row scores NaN (0/0), as in gensim's arrays.

A rank needs a count, not the scores: one float32 kernel pass over the rows (a neighbour
query's), where only the rows whose float32 score lies within the kernel's error of the
compared score are scored exactly, in the rescoring's own arithmetic (exact_cosines), so the
count is exact and each compared row's score is the one /neighbors reports, to the bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.engine.search import cosmul_given
from service.engine.search.cosine import Plan
from service.engine.search.cosmul_given import COSMUL_EPSILON
from service.engine.search.kernels import Kernel, mask_rows
from service.engine.search.queries import CosmulQuery
from service.engine.search.store import RowStore, gather_rows

# float64 rows held at once while rescoring given rows (341 rows of 384), as the rescoring's
# chunks: its temporaries stay in the core's cache.
BLOCK_BYTES = 2**20
# Rows of a range summed at once, for every direction: their sums and one component's products
# (128 KiB a direction). Measured on 1M x 384 by columns, one thread: 0.13-0.14 s per 262,144
# rows at 16,384 or 65,536 rows, 0.19 s at 4,096, and 16 directions of 30,522 rows 193 ms
# against 297 ms one direction at a time; adding products laid out by rows took 0.85 s, most
# of it copying the rows across the columns.
RANGE_BLOCK_ROWS = 16_384
# Rows of one float32 pass at once while ranking: their scores (4 MiB) and sort order (8 MiB).
RANK_BLOCK_ROWS = 2**20


def exact_cosines(store: RowStore, direction: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """float64 cosines of `rows` (ids) with a unit direction, as the rescoring computes them,
    a block of rows at a time; NaN for zero rows."""
    block = max(1, BLOCK_BYTES // (8 * store.width))
    dots = np.empty(rows.size)
    for start in range(0, rows.size, block):
        part = rows[start : start + block]
        products = np.multiply(gather_rows(store.vectors, part), direction, dtype=np.float64,
                               order="C")  # fmt: skip
        np.add.reduce(products, axis=1, out=dots[start : start + block])
    with np.errstate(divide="ignore", invalid="ignore"):
        return dots / store.norms64[rows]


def range_cosines(store: RowStore, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
    """(directions, stop - start) float64 cosines of rows start..stop; NaN for zero rows.

    Each row's products are added component by component, in order, for a block of rows and
    every direction at once (one pass down each stored column): the same sums whatever the
    page, the layout or the other directions, within about 1e-16 of the rescoring's pairwise
    sums.
    """
    vectors = store.vectors
    size = max(stop - start, 0)
    scores = np.empty((len(directions), size))
    buffer = np.empty((len(directions), min(RANGE_BLOCK_ROWS, size)))
    columns = directions.T[:, :, None]  # each component's weight in every direction
    for first in range(start, stop, RANGE_BLOCK_ROWS):
        last = min(first + RANGE_BLOCK_ROWS, stop)
        rows, product = vectors[first:last], buffer[:, : last - first]
        total = scores[:, first - start : last - start]
        np.multiply(columns[0], rows[None, :, 0], out=total, dtype=np.float64)
        for component in range(1, store.width):
            np.multiply(columns[component], rows[None, :, component], out=product,
                        dtype=np.float64)  # fmt: skip
            total += product
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
    cosines = range_cosines(store, query.terms, start, stop)
    if query.scales is not None:  # raw vectors as given
        return cosmul_given.objectives(cosines, query)
    shifted = (1 + cosines) / 2
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

"""The candidate pass: a kernel scores every row for a batch of unit directions and keeps each
direction's candidates.

The pass, three interchangeable kernels (the `search_kernel` setting; docs/exact-pass.md has the
measurements that chose among them):
- compiled (default): BlasKernel with the compiled pass of dots.c where it was measured to win
  (AVX-512, COMPILED_FROM to COMPILED_UNTIL directions, rows stored by columns), BLAS otherwise.
- blas: BlasKernel alone: scores the table's own raw float32 rows (memory-mapped for a prepared
  table) with one BLAS matrix product per block of rows and divides by the rows' norms, so the
  table is held once. It replaced a kernel that kept a second, unit-normalised copy of the rows
  stored transposed (benchmarks/engine_throughput.py measures both side by side).
- faiss: FaissKernel, FAISS's exhaustive search (knn_inner_product, IndexFlatIP's) over a unit
  copy of the rows it holds beside the table's; its cut at a fixed count is certified or
  searched again deeper, so its answers are the others'.

Scores are float32 cosines known to within `error` of the true ones; candidate selection
(search/selection.py) keeps every row within that slack of the k-th best, so the float64
rescoring that follows (search/rescoring.py) is exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, Protocol

import faiss
import numpy as np

from service.engine.search.products import (
    COMPILED_FROM,
    COMPILED_UNTIL,
    by_columns,
    by_rows,
    compiled_by_columns,
    compiled_runs,
    compiled_serves,
    float32_dot_error,
)
from service.engine.search.selection import candidate_rows
from service.engine.search.store import RowStore, gather_rows, stored_by_columns
from service.engine.tables.layout import BLOCK_ROWS, blank_rows

KernelName = Literal["compiled", "blas", "faiss"]
# Extra candidates per query where a cut at a fixed count (FAISS's search, and on top of its
# slack, output scoring) could otherwise lose a near-tie to float32 rounding.
RESCORE_MARGIN = 4
# From this many directions FAISS's exhaustive search scores a batch by BLAS (a matrix product
# over blocks of rows), below it row by row with its SIMD inner products. The crossover is near
# 3 directions at every width from 50 to 4,096 (one thread: BLAS 0.38-0.61x at 1, 0.68-1.03x
# at 2, 0.89-1.31x at 3, 1.29-1.80x at 4, 2.1-3.2x at 8). FAISS's own threshold is 128,000
# directions x width: row by row below 333 directions of 384.
BLAS_FROM = 4
# How much deeper FAISS searches again for directions whose cut it could not certify.
RESCORE_DEEPER = 8
# The most float32 scores a pass holds at once (directions x rows): a batch's temporaries stay
# the same size whatever the table. Batches of up to 137 directions score the default table
# (30,522 rows) in one block; a full batch of 256 takes two.
SCORES_BUDGET = 16 * 2**20
# Directions are scaled by a power of two so that no float32 product of a row can overflow:
# the largest row norm times the direction's is kept below this.
LARGEST_SCALED_NORM = 2.0**64
# A row whose float32 score could be off by more than this, through underflow (rows of tiny
# norm), is not selected by its score: it is a candidate of every query and rescored exactly.
UNDERFLOW_SLACK = 2.0**-30


def rows_per_block(directions: int, rows: int) -> int:
    """Rows scored at once for `directions` directions within SCORES_BUDGET."""
    return max(1, min(rows, SCORES_BUDGET // (4 * max(1, directions))))


Excluded = Sequence[np.ndarray] | None


class Kernel(Protocol):
    """Scores unit directions against the first `searchable` rows (positions are rows)."""

    # Whether candidates() leaves out each query's excluded positions itself (then it needs
    # only k candidates, not k plus the exclusions).
    masks_exclusions: bool
    # Whether dots.c selects and rescores the candidates of this kernel's passes (where it runs).
    compiled: bool
    # A bound on |score - true cosine| for a float32 unit direction.
    error: float
    # Rows whose scores are not to be trusted (0 in scores()): candidates of every query.
    always: np.ndarray
    # Rows that must never be selected by score: zero rows and `always`, sorted.
    masked: np.ndarray

    @property
    def description(self) -> str:
        """What computes the pass (the table's `index_type`)."""
        ...

    @property
    def nbytes(self) -> int:
        """Bytes the kernel holds beyond the table's rows."""
        ...

    def scores(self, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
        """(batch, stop - start) float32 cosines with rows start..stop (0 for masked rows)."""
        ...

    def scores_of(self, directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """(batch, len(rows)) float32 cosines with the given rows (0 for masked rows)."""
        ...

    def candidates(
        self, directions: np.ndarray, depth: int, searchable: int, excluded: Excluded = None
    ) -> Sequence[np.ndarray] | np.ndarray:
        """Per direction, rows of (at least) its `depth` best, unordered; -1 pads.

        `excluded[i]`: rows direction i must not get (when masks_exclusions).
        """
        ...


class BlasKernel:
    """The raw rows scored by BLAS (or, `compiled`, by dots.c where it serves), each score
    divided by its row's norm."""

    masks_exclusions = True

    def __init__(self, store: RowStore, compiled: bool = True) -> None:
        self.compiled = compiled
        self.vectors = store.vectors
        norms = store.norms64
        largest = float(norms.max(initial=0.0))
        # 2**exponent divides the directions when rows are large enough to overflow float32.
        exponent = max(0, math.ceil(math.log2(largest / LARGEST_SCALED_NORM))) if largest else 0
        self.direction_scale = np.float32(2.0**-exponent)
        width = store.width
        # Underflow: each of `width` products can lose 2**-150 absolutely (subnormals); in
        # cosine units that is width * 2**-149 * 2**exponent / norm.
        tiny = width * 2.0 ** (exponent - 149) / UNDERFLOW_SLACK
        positive = norms > 0
        reliable = norms >= tiny
        self.always = np.flatnonzero(positive & ~reliable).astype(np.int64)
        self.masked = np.flatnonzero(~reliable).astype(np.int64)
        scales = np.zeros(norms.size, dtype=np.float32)
        scales[reliable] = (2.0**exponent / norms[reliable]).astype(np.float32)
        self.scales = scales
        # The table's rows are stored by columns (tables/layout.py), or, for a table handed in
        # already checked in row order, by rows: each has its own fastest products.
        self.by_columns = stored_by_columns(self.vectors)
        # The dot product (width terms, the direction rounded to float32 too), the scale's
        # rounding and the multiplication by it: (width + 3) roundings of u, doubled for safety.
        self.error = float32_dot_error(width + 3) + UNDERFLOW_SLACK

    @property
    def description(self) -> str:
        """What computes the pass (the table's `index_type`)."""
        if self.compiled and self.by_columns and compiled_runs():
            return (
                "exact inner product, compiled pass over the raw rows (AVX-512) for "
                f"{COMPILED_FROM}-{COMPILED_UNTIL - 1} queries a batch, BLAS matrix product "
                "for the others"
            )
        return "exact inner product, BLAS matrix product over the raw rows"

    @property
    def nbytes(self) -> int:
        """Bytes the kernel holds beyond the table's rows: a float32 scale per row."""
        return int(self.scales.nbytes + self.always.nbytes + self.masked.nbytes)

    def scores(self, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
        """(batch, stop - start) float32 cosines with rows start..stop (0 for masked rows)."""
        rows = self.vectors[start:stop]
        scaled = directions * self.direction_scale if self.direction_scale != 1 else directions
        scaled = np.ascontiguousarray(scaled, dtype=np.float32)
        if self.compiled and compiled_serves(scaled, rows):  # rows stored by columns only
            return compiled_by_columns(scaled, rows, self.scales[start:stop])
        products = by_columns(scaled, rows) if self.by_columns else by_rows(scaled, rows)
        products *= self.scales[start:stop]
        return products

    def scores_of(self, directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """(batch, len(rows)) float32 cosines with the given rows (0 for masked rows)."""
        gathered = gather_rows(self.vectors, rows)
        scaled = directions * self.direction_scale if self.direction_scale != 1 else directions
        scaled = np.ascontiguousarray(scaled, dtype=np.float32)
        if gathered.flags.c_contiguous:
            products = by_rows(scaled, gathered)
        else:
            products = by_columns(scaled, gathered)
        products *= self.scales[rows]
        return products

    def candidates(
        self, directions: np.ndarray, depth: int, searchable: int, excluded: Excluded = None
    ) -> list[np.ndarray]:
        """Per direction, rows of its `depth` best and any that may tie with them, its
        excluded rows left out."""
        block = rows_per_block(len(directions), searchable)
        if block >= searchable:
            scores = self.mask(self.scores(directions, 0, searchable), excluded, 0)
            found = candidate_rows(scores, depth, self.error, self.compiled)
        else:
            found = _blocked_candidates(self, directions, depth, searchable, block, excluded)
        return with_always(found, self.always, searchable)

    def mask(self, scores: np.ndarray, excluded: Excluded, start: int) -> np.ndarray:
        """`scores` of rows start.. with masked rows and each query's exclusions at -inf."""
        return mask_rows(mask(scores, excluded, start), self.masked, start)


class FaissKernel:
    """Unit rows held row after row, each batch's best found by FAISS's exhaustive search
    (knn_inner_product: what IndexFlatIP.search runs, over the first `searchable` rows)."""

    description = "exact inner product, FAISS knn_inner_product over a unit float32 copy"
    masks_exclusions = True
    compiled = False

    def __init__(self, store: RowStore, blas_from: int | None = BLAS_FROM) -> None:
        width = store.width
        # FAISS's own setting when None (benchmarks/engine_throughput.py measures it).
        self.blas_from = blas_from
        scales = np.zeros(store.rows)
        scales[store.indexed] = 1 / store.norms64[store.indexed]
        unit = blank_rows(store.rows, width)
        for start in range(0, store.rows, BLOCK_ROWS):
            part = slice(start, start + BLOCK_ROWS)
            unit[part] = store.vectors[part] * scales[part, None]
        unit.flags.writeable = False
        self.rows = unit
        self.directional = store.norms64 > 0
        self.always = np.empty(0, dtype=np.int64)
        self.masked = store.zero
        # The dot product, plus the unit rows' own rounding.
        self.error = float32_dot_error(width) + 2.0**-20

    @property
    def nbytes(self) -> int:
        """Bytes the kernel holds beyond the table's rows: the unit copy."""
        return int(self.rows.nbytes + self.directional.nbytes)

    def scores(self, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
        """(batch, stop - start) float32 inner products with rows start..stop."""
        return np.asarray(directions, dtype=np.float32) @ self.rows[start:stop].T

    def scores_of(self, directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """(batch, len(rows)) float32 inner products with the given rows."""
        return np.asarray(directions, dtype=np.float32) @ self.rows[rows].T

    def candidates(
        self, directions: np.ndarray, depth: int, searchable: int, excluded: Excluded = None
    ) -> list[np.ndarray]:
        """Per direction, rows of its `depth` best and any that may tie with them, its
        excluded rows left out.

        FAISS cuts at a fixed count; a cut is kept only where it is certified: the last row
        FAISS returned scores below the depth-th best kept row minus the slack, so every row
        left out scores lower still and none can belong to the exact top `depth`. Directions
        whose cut is not certified (near-ties, or exclusions and zero rows filling the cut)
        are searched again RESCORE_DEEPER times as deep, up to every row.
        """
        directions = np.ascontiguousarray(directions, dtype=np.float32)
        widest = max((len(e) for e in excluded), default=0) if excluded is not None else 0
        reach = depth + widest + RESCORE_MARGIN
        found: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * len(directions)
        pending = np.arange(len(directions))
        while pending.size:
            reach = min(reach, searchable)
            scores, rows = self._knn(directions[pending], searchable, reach)
            left = None if excluded is None else [excluded[i] for i in pending.tolist()]
            kept, certified = self._certified(scores, rows, depth, left, reach == searchable)
            for position, query in enumerate(pending.tolist()):
                found[query] = kept[position]
            pending = pending[~certified]
            reach *= RESCORE_DEEPER
        return found

    def _knn(
        self, directions: np.ndarray, searchable: int, reach: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's `reach` best of the first `searchable` rows: (scores, rows), best first."""
        count, width = directions.shape
        scores = np.empty((count, reach), dtype=np.float32)
        rows = np.empty((count, reach), dtype=np.int64)
        if self.blas_from is not None:
            # Process-wide in FAISS, and compared with directions x width: set for each call,
            # so that every table crosses over at the same number of directions.
            faiss.cvar.distance_compute_blas_threshold = self.blas_from * width
        faiss.knn_inner_product(
            faiss.swig_ptr(directions), faiss.swig_ptr(self.rows), self.rows.shape[1],
            count, searchable, reach, faiss.swig_ptr(scores), faiss.swig_ptr(rows),
        )  # fmt: skip
        return scores, rows

    def _certified(
        self,
        scores: np.ndarray,
        rows: np.ndarray,
        depth: int,
        excluded: Excluded,
        every_row: bool,
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Each direction's rows within the slack of its depth-th best kept row, and whether
        that is every such row of the table (see candidates)."""
        valid = rows >= 0
        if self.masked.size:
            valid &= self.directional[rows]  # -1 pads read the last row: already invalid
        if excluded is not None:
            valid &= ~_named(rows, excluded)
        counted = np.cumsum(valid, axis=1)
        enough = counted[:, -1] >= depth
        at_depth = np.argmax(counted >= depth, axis=1)
        bound = scores[np.arange(len(scores)), at_depth].astype(np.float64) - self.error
        bound[~enough] = -np.inf
        certified = every_row | (enough & (scores[:, -1] < bound))
        keep = valid & (scores >= bound[:, None])
        return [row[kept] for row, kept in zip(rows, keep, strict=True)], certified


# Candidate-exclusion pairs compared at once (a boolean array of this many cells) rather than
# query by query through np.isin.
NAMED_AT_ONCE = 65_536


def _named(rows: np.ndarray, excluded: Sequence[np.ndarray]) -> np.ndarray:
    """Which entries of each row of `rows` its own `excluded` rows name."""
    widest = max(len(positions) for positions in excluded)
    if rows.size * widest > NAMED_AT_ONCE:
        pairs = zip(rows, excluded, strict=True)
        return np.stack([np.isin(found, positions) for found, positions in pairs])
    padded = np.full((len(excluded), widest), -2, dtype=np.int64)  # -2 names no row
    for query, positions in enumerate(excluded):
        padded[query, : len(positions)] = positions
    return (rows[:, :, None] == padded[:, None, :]).any(axis=2)


def _blocked_candidates(
    kernel: BlasKernel,
    directions: np.ndarray,
    depth: int,
    searchable: int,
    block: int,
    excluded: Excluded,
) -> list[np.ndarray]:
    """candidate_rows over blocks of rows, merged: the same rows as one pass over all of them.

    A row dropped in its block scored below that block's depth-th best minus the slack, which
    is at most the depth-th best of all rows minus the slack, so one pass would drop it too; and
    every row of the overall depth best survives its block, so the merged bound is the same.
    """
    slack = kernel.error
    positions: list[list[np.ndarray]] = [[] for _ in directions]
    values: list[list[np.ndarray]] = [[] for _ in directions]
    for start in range(0, searchable, block):
        stop = min(start + block, searchable)
        scores = kernel.mask(kernel.scores(directions, start, stop), excluded, start)
        depth_here = min(depth, stop - start)
        for query, columns in enumerate(candidate_rows(scores, depth_here, slack, kernel.compiled)):
            positions[query].append(columns + start)
            values[query].append(scores[query, columns])
    merged = []
    for kept, scored in zip(positions, values, strict=True):
        found, score = np.concatenate(kept), np.concatenate(scored)
        if found.size > depth:
            bound = np.partition(score, found.size - depth)[found.size - depth] - slack
            found = found[score >= bound]
        merged.append(found)
    return merged


def mask(scores: np.ndarray, excluded: Excluded, start: int) -> np.ndarray:
    """`scores` (positions start..) with each row's excluded positions set to -inf, in place."""
    if excluded is None:
        return scores
    stop = start + scores.shape[1]
    for row, positions in enumerate(excluded):
        if not positions.size:  # most queries exclude nothing: no array operations for them
            continue
        inside = positions[(positions >= start) & (positions < stop)]
        scores[row, inside - start] = -np.inf
    return scores


def mask_rows(scores: np.ndarray, rows: np.ndarray, start: int) -> np.ndarray:
    """`scores` (rows start..) with the columns of sorted `rows` set to -inf for every query."""
    if rows.size:
        stop = start + scores.shape[1]
        inside = rows[np.searchsorted(rows, start) : np.searchsorted(rows, stop)]
        scores[:, inside - start] = -np.inf
    return scores


def with_always(found: list[np.ndarray], always: np.ndarray, searchable: int) -> list[np.ndarray]:
    """Each query's candidates plus the rows that are candidates of every query."""
    extra = always[: np.searchsorted(always, searchable)]
    if not extra.size:
        return found
    # A row is in `found` too only when every row was kept (a bound of -inf).
    return [np.concatenate([rows, np.setdiff1d(extra, rows)]) for rows in found]


def make_kernel(name: KernelName, store: RowStore) -> Kernel:
    """The kernel called `name` over `store`'s rows."""
    if name == "faiss":
        return FaissKernel(store)
    return BlasKernel(store, compiled=name == "compiled")

"""The rows a search reads, the pass that scores them for a batch, and the exact step after it.

Everything here works on a table's raw float32 rows, in the order a search runs: the rows held
once (RowStore), the candidate pass over them (a kernel, then the selection of candidates), and
the float64 rescoring of those candidates. The pass was a module of its own that imported
nothing of the search but the rows, and most steps that take a Kernel take a RowStore too.

RowStore: a table's raw float32 rows with what every search step needs from them. The candidate
pass, the float64 rescoring and the analogy term sums all work from these arrays, so each of them
takes a RowStore rather than the search that owns it. There is one copy of the rows: the table's
own (memory-mapped for a prepared table). Every pass scores the raw rows and divides by their
norms; positions in a pass are row numbers.

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

Scores are float32 cosines known to within `error` of the true ones; candidate selection keeps
every row within that slack of the k-th best, so the float64 rescoring that follows is exact.

Selection (candidate_rows), over score matrices computed in float32: candidates are every
column within `slack` of a bound at or below a row's depth-th largest score, not exactly
`depth` columns: float32 products may differ in their last bits between batch sizes, and rows
may tie exactly, so a fixed cut could keep different rows for the same query. With the slack,
every row that can belong to the exact top-k is kept, whatever the batch.

Large rows use block maxima: the columns are dealt into interleaved blocks, and the depth-th
largest block maximum is a lower bound of the depth-th largest score (each of the depth best
blocks holds a score at least that high). Only blocks whose maximum reaches the bound are
looked into. Measured against a full partition on the default table: 0.4 ms against 5.8 ms
for 16 queries, 25 ms against 53 ms for 1024 (benchmarks/engine_throughput.py shows the net).

With search_kernel=compiled, where dots.c runs (AVX-512), both steps after the pass run there too,
outside the GIL, whichever pass (dots.c's or BLAS's) computed the scores: over HTTP they are worth
1.20x req/s beside the compiled pass (docs/exact-pass.md). The selection keeps every column within
the slack of each row's depth-th best itself, read once with a heap of the depth best (4-5 us a
query on the default table against numpy's 16-18), and the rescoring's float64 sums are read from
the table in place, a column at a time for 32 candidates with the next columns prefetched, summed
as numpy sums (its pairwise order), so the same bits (about 26 us for 10 candidates of the default
table against 45 by numpy's gathers, in batches of 16 queries). A lone query's candidates
(rescore_one) stay with numpy: there dots.c measured 1.07-1.08x at best. numpy's steps below answer
everywhere else and are what tests/engine/test_compiled_steps.py holds dots.c to.

Rescoring: all queries of a batch are rescored in a few array operations. Each score is one dot
product summed on its own (never a matrix product whose blocking depends on how many candidates
there are), so a query's answer is the same whatever else was in its batch. A batch of one query
(an approximate search serves one query per call) takes a shorter road to the same answer, bit
for bit: one sort of its candidates, one gather, one product and one sum (about 15 numpy calls
against about 30; the path around FAISS was half of a fast-scan query: BENCHMARKS.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal, Protocol

import faiss
import numpy as np

from service.engine import threads
from service.engine.errors import DimensionMismatch, ZeroVector
from service.engine.search import dots
from service.engine.search.queries import NeighborQuery, Neighbors
from service.engine.tables.layout import BLOCK_ROWS, blank_rows
from service.engine.tables.table import EmbeddingTable


@dataclass(frozen=True, eq=False)
class RowStore:
    """Raw rows, their float64 norms, and which rows have a direction.

    Zero rows (padding) have no direction: they are never candidates. `indexed` lists the rows
    with a norm, in row order.
    """

    table: EmbeddingTable
    norms64: np.ndarray
    indexed: np.ndarray
    zero: np.ndarray

    @classmethod
    def of(cls, table: EmbeddingTable) -> RowStore:
        """The store of `table`'s rows."""
        norms64 = table.norms64
        positive = norms64 > 0
        indexed = np.flatnonzero(positive).astype(np.int64)
        zero = np.flatnonzero(~positive).astype(np.int64)
        return cls(table, norms64, indexed, zero)

    @property
    def vectors(self) -> np.ndarray:
        """The raw float32 rows."""
        return self.table.vectors

    @property
    def width(self) -> int:
        """Components per row."""
        return self.table.width

    @property
    def rows(self) -> int:
        """Rows in the table."""
        return self.table.rows

    @property
    def nbytes(self) -> int:
        """Bytes held by the raw rows, their norms and the row lists."""
        return int(self.vectors.nbytes + self.norms64.nbytes + self.indexed.nbytes) + int(
            self.zero.nbytes
        )

    def check_vector(self, vector: np.ndarray) -> np.ndarray:
        """`vector` as a flat array of the table's width; DimensionMismatch otherwise."""
        vector = np.asarray(vector).reshape(-1)
        if vector.size != self.width:
            raise DimensionMismatch(self.width, vector.size)
        return vector

    def direction(self, vector: np.ndarray, what: str = "the query vector") -> np.ndarray:
        """`vector` scaled to unit length in float64; ZeroVector when it has no direction."""
        vector = self.check_vector(vector).astype(np.float64)
        norm = np.sqrt(np.sum(vector * vector))
        if not norm > 0:
            raise ZeroVector(what)
        return vector / norm

    def directions(self, rows: np.ndarray) -> np.ndarray:
        """Unit float64 directions of table rows; ZeroVector for a row with no direction."""
        rows = np.asarray(rows, dtype=np.int64)
        zero = self.norms64[rows] == 0
        if zero.any():
            row = int(rows[int(np.argmax(zero))])
            raise ZeroVector(f"row {row} ({self.table.tokens[row]!r})")
        return self.vectors[rows].astype(np.float64) / self.norms64[rows, None]

    def positions_of(self, rows: frozenset[int]) -> np.ndarray:
        """`rows` as a sorted array (the positions a pass masks)."""
        if not rows:
            return np.empty(0, dtype=np.int64)
        return np.sort(np.fromiter(rows, dtype=np.int64, count=len(rows)))

    def searchable(self, restrict: int | None) -> int:
        """How many rows a pass scans: the first `restrict` rows, or all."""
        return self.rows if restrict is None else min(restrict, self.rows)

    def directional(self, restrict: int | None) -> int:
        """How many rows with a direction lie within the first `restrict` rows."""
        if restrict is None:
            return int(self.indexed.size)
        return int(np.searchsorted(self.indexed, restrict))


# The pass: a kernel scores every row for a batch of directions, then candidate selection.

KernelName = Literal["compiled", "blas", "faiss"]
# Up to this many directions, one pass of inner products each beats a matrix product, which
# first packs the whole table (1 thread, 30,522 x 384: 2.5 ms per vector with FAISS's
# fvec_inner_products_ny over the raw rows, against 3.4 ms for numpy's matrix-vector product
# and about 10 ms for any matrix product of 2 to 4; BENCHMARKS.md).
SMALL_BATCH = 3
# Batches are scored in multiples of this many directions, padded with zeros: OpenBLAS's sgemm
# runs a batch whose size is not a multiple of its 4-wide micro-kernel at the cost of the next
# multiple, or worse (1 thread, the default table's columns: 11 directions 8.5 ms, 12
# directions 6.7 ms; 31 13.9 ms, 32 11.4 ms). rows @ directions.T, faster at 4 and 8 directions
# in a quiet moment, lost to directions @ columns at 8 in every round of a loaded CI run
# (525-582 against 685-809 q/s), and at 3 and 4 on 2026-12-02 (123-183 against 309-419 q/s,
# one run each): every batch of three or more is directions @ columns.
PAD_TO = 4
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
# Bytes in a float32.
FLOAT32 = 4
# float32 spacing at 1 (unit roundoff u = 2**-24).
UNIT_ROUNDOFF = 2.0**-24
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


def by_columns(directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(batch, rows) float32 inner products with rows stored by columns (rows.T is C order).

    BLAS (BlasKernel.scores calls the compiled pass first, where it serves): one direction a
    1-row matrix product; two a matrix-vector product each; more: directions @ rows.T, one
    plain matrix product, the directions padded to a multiple of PAD_TO. Three or four were
    once rows @ directions.T, transposed (1.16x and 0.97x the best layout when chosen), but on
    another day's machine that tall product ran at 0.36-0.43x while the padded one held
    0.86-1.09x. Measured on the default table, one thread (benchmarks/engine_throughput.py
    measures the result in one run).
    """
    columns = rows.T
    count = len(directions)
    if count == 1:
        return directions @ columns
    if count == 2:
        return np.stack([direction @ columns for direction in directions])
    padded = padded_batch(directions)
    products = padded @ columns
    return products if len(padded) == count else products[:count]


def compiled_runs() -> bool:
    """Whether passes over columns are compiled here: dots.c is built and runs on this CPU, and
    compute threads are not capped above one (BLAS can use them; the compiled pass is one
    thread)."""
    return dots.AVAILABLE and (threads.compute_cap or 1) == 1


# The batch sizes the compiled pass serves; BLAS's matrix product over the columns the others.
# A hand-written kernel stays only where it wins by 1.15x at the batch sizes a server forms
# (docs/exact-pass.md). At 32 connections the server forms batches of 9-16; there, on an Intel
# Xeon with AVX-512 (2026-12-06), the whole search ran 1.09-1.13x in-process and the server
# 1.39x req/s at 0.78x the CPU a request (vectors); the earlier AMD EPYC figures put it at 1.46x
# a plain sgemm. One direction: 0.90-1.02x BLAS (AMD 0.90x the sgemm); 24 0.98x, 32 0.85-0.92x.
COMPILED_FROM = 2
COMPILED_UNTIL = 24


def compiled_serves(directions: np.ndarray, rows: np.ndarray) -> bool:
    """Whether compiled_by_columns computes this pass: compiled_runs(), float32 rows stored by
    columns (`rows.T` C order, or a slice of rows of one), and COMPILED_FROM to COMPILED_UNTIL
    (exclusive) directions."""
    return (
        compiled_runs()
        and COMPILED_FROM <= len(directions) < COMPILED_UNTIL
        and rows.ndim == 2
        and rows.dtype == np.float32
        and rows.strides[0] == FLOAT32
        and rows.strides[1] % FLOAT32 == 0
    )


def compiled_by_columns(
    directions: np.ndarray, rows: np.ndarray, scales: np.ndarray | None = None
) -> np.ndarray:
    """(batch, len(rows)) float32 `directions @ rows.T` by dots.c, each column times `scales` if
    given. Only where dots.AVAILABLE (compiled_serves() says where it is served)."""
    assert dots.LIBRARY is not None
    directions = np.ascontiguousarray(directions, dtype=np.float32)
    count, width = directions.shape
    if rows.shape[1] != width:
        raise DimensionMismatch(rows.shape[1], width)
    n = rows.shape[0]
    out = np.empty((count, n), dtype=np.float32)
    if scales is not None:
        scales = np.ascontiguousarray(scales, dtype=np.float32)
        if scales.shape != (n,):
            raise ValueError(f"{scales.shape[0]} scales for {n} rows")
    if n:
        dots.LIBRARY.dots_by_columns(
            dots.SIMD,
            directions.ctypes.data,
            count,
            width,
            rows.ctypes.data,
            rows.strides[1] // FLOAT32,
            n,
            None if scales is None else scales.ctypes.data,
            out.ctypes.data,
        )
    return out


def padded_batch(directions: np.ndarray) -> np.ndarray:
    """`directions` with zero rows appended up to a multiple of PAD_TO (itself when it is one)."""
    count, width = directions.shape
    size = -(-count // PAD_TO) * PAD_TO
    if size == count:
        return directions
    padded = np.zeros((size, width), dtype=directions.dtype)
    padded[:count] = directions
    return padded


def by_rows(directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(batch, rows) float32 inner products with rows stored row after row."""
    if len(directions) <= SMALL_BATCH:
        return inner_products(directions, rows)
    return directions @ rows.T


def inner_products(directions: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(len(directions), len(rows)) float32 inner products, one streaming pass per direction.

    FAISS's SIMD kernel over row-major rows: faster than BLAS's matrix-vector product on
    them, which has to read each row as a column of the transposed matrix.
    """
    out = np.empty((len(directions), len(rows)), dtype=np.float32)
    width = rows.shape[1]
    for i, direction in enumerate(directions):
        faiss.fvec_inner_products_ny(  # type: ignore[attr-defined]
            faiss.swig_ptr(out[i]),
            faiss.swig_ptr(direction),
            faiss.swig_ptr(rows),
            width,
            len(rows),
        )
    return out


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


def float32_dot_error(width: int, scale: float = 1.0) -> float:
    """A bound on the rounding error of a float32 dot product of `width` terms.

    |error| <= width * 2^-24 * sum |a_i b_i| <= width * 2^-24 * |a| |b|; doubled for safety.
    `scale` is |a| |b| (1 for unit vectors).
    """
    return width * 2.0**-23 * scale


def make_kernel(name: KernelName, store: RowStore) -> Kernel:
    """The kernel called `name` over `store`'s rows."""
    if name == "faiss":
        return FaissKernel(store)
    return BlasKernel(store, compiled=name == "compiled")


# Columns per block; blocks interleave (block b holds columns b, b + n, b + 2n, ...), so the
# maxima are one vectorised reduction over a contiguous axis. Evaluating the Google analogy set
# took 0.99 s with 32, 1.10 s with 64 and 1.25 s with 128, in one run (16 was no better than 32).
GROUPS = 32
# Partition this many extra columns per row on the small-table path; only a row with more
# near-ties than that is scanned in full.
TIE_ROOM = 16
# Rows selected together: the selection's temporaries (block copies, partition indices) are
# a few times one chunk of scores, whatever the batch (256 rows at once took 62 MB of int64
# partition indices on the default table).
CHUNK_ROWS = 32

# Room for candidates beyond the depth in compiled_candidates (a row with more near-ties than
# this is selected again in numpy): 8 KiB of row numbers a query at depth 10.
CANDIDATE_ROOM = 1_024


def candidate_rows(
    scores: np.ndarray, depth: int, slack: np.ndarray | float, compiled: bool = False
) -> list[np.ndarray]:
    """Per row of `scores`, its columns scoring within `slack` of a bound <= its depth-th best
    (by dots.c if `compiled` and it runs here, else numpy)."""
    rows = scores.shape[0]
    slack = np.broadcast_to(np.asarray(slack, dtype=np.float64), (rows,))
    found_there = compiled_candidates(scores, depth, slack) if compiled else None
    if found_there is not None:
        return found_there
    found: list[np.ndarray] = []
    for start in range(0, rows, CHUNK_ROWS):
        part = slice(start, start + CHUNK_ROWS)
        found.extend(_select(scores[part], depth, slack[part]))
    return found


def compiled_candidates(
    scores: np.ndarray, depth: int, slack: np.ndarray
) -> list[np.ndarray] | None:
    """candidate_rows by dots.c, bounded by each row's depth-th best itself (ascending columns);
    None where it does not run (not built, no AVX-512, float64 scores, a depth of 0 or beyond
    dots.MOST_DEPTH or the row, or more ties than CANDIDATE_ROOM leaves room for)."""
    count, columns = scores.shape
    if (
        not dots.SELECTS
        or scores.dtype != np.float32
        or not 1 <= depth <= min(columns, dots.MOST_DEPTH)
        or count == 0
    ):
        return None
    scores = np.ascontiguousarray(scores)
    slack = np.ascontiguousarray(slack, dtype=np.float64)
    room = min(columns, depth + CANDIDATE_ROOM)
    found = np.empty((count, room), dtype=np.int64)
    counts = np.empty(count, dtype=np.int64)
    assert dots.LIBRARY is not None
    done = dots.LIBRARY.dots_candidates(
        scores.ctypes.data, count, columns, depth, slack.ctypes.data, room,
        found.ctypes.data, counts.ctypes.data,
    )  # fmt: skip
    if done != 0:
        return None
    return [found[row, :kept] for row, kept in enumerate(counts.tolist())]


def _select(scores: np.ndarray, depth: int, slack: np.ndarray) -> list[np.ndarray]:
    rows, columns = scores.shape
    if columns // GROUPS > 2 * depth:
        return _by_blocks(scores, depth, slack)
    if depth + TIE_ROOM >= columns:
        return [np.arange(columns)] * rows
    return _by_partition(scores, depth, slack)


def _by_blocks(scores: np.ndarray, depth: int, slack: np.ndarray) -> list[np.ndarray]:
    rows, columns = scores.shape
    blocks = columns // GROUPS
    dealt = scores[:, : GROUPS * blocks].reshape(rows, GROUPS, blocks)
    block_max = dealt.max(axis=1)
    bound = np.partition(block_max, blocks - depth, axis=1)[:, blocks - depth] - slack
    hit_rows, hit_blocks = np.nonzero(block_max >= bound[:, None])
    keep = dealt[hit_rows, :, hit_blocks] >= bound[hit_rows, None]
    found_rows = np.broadcast_to(hit_rows[:, None], keep.shape)[keep]
    found_columns = (hit_blocks[:, None] + blocks * np.arange(GROUPS))[keep]
    tail_rows, tail_columns = np.nonzero(scores[:, GROUPS * blocks :] >= bound[:, None])
    found_rows = np.concatenate([found_rows, tail_rows])
    found_columns = np.concatenate([found_columns, tail_columns + GROUPS * blocks])
    order = np.argsort(found_rows, kind="stable")
    splits = np.searchsorted(found_rows[order], np.arange(1, rows))
    return np.split(found_columns[order], splits)


def _by_partition(scores: np.ndarray, depth: int, slack: np.ndarray) -> list[np.ndarray]:
    rows, columns = scores.shape
    room = depth + TIE_ROOM
    best = np.argpartition(scores, columns - room, axis=1)[:, columns - room :]
    values = np.take_along_axis(scores, best, axis=1)
    bound = np.partition(values, TIE_ROOM, axis=1)[:, TIE_ROOM] - slack
    crowded = values.min(axis=1) >= bound  # every partitioned column ties: look at them all
    return [
        np.flatnonzero(scores[i] >= bound[i]) if crowded[i] else best[i][values[i] >= bound[i]]
        for i in range(rows)
    ]


# The rescoring: each query's candidates scored exactly in float64 from the raw rows.

# Candidates rescored together: 512 rows of 384 float64 are 1.5 MB per temporary.
CHUNK = 512
# Queries rescored together: their candidate and exclusion arrays are the other temporaries
# (256 queries with k=1000 and 1,000 exclusions each held 25 MB of them at once).
QUERY_CHUNK = 32
# The most bytes of candidate rows stored by columns gathered at once for a batch's rescoring
# (10,922 rows of the default table's 384 float32): see _groups.
GATHER_BUDGET = 16 * 2**20
# Candidates of a batch are gathered together when there is at least one in this many rows of
# the table (about every other cache line of a column): the default table's 30,522 rows, from
# 954 candidates on (a batch of about 96 queries with k=10). See _groups.
SHARING = 32
# Candidate-exclusion pairs compared directly (a boolean matrix of this many cells, 64 KiB)
# rather than through np.isin.
SMALL_EXCLUSION_PRODUCT = 65_536


def rescore(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    compiled: bool = False,
) -> list[Neighbors]:
    """Each query's candidates scored in float64 from the raw rows, best k first (ties: id);
    a batch's sums by dots.c if `compiled` and it runs here."""
    if len(queries) == 1 and len(positions[0]) <= CHUNK:
        return [rescore_one(store, queries[0], np.asarray(positions[0], dtype=np.int64))]
    return rescore_batch(store, queries, positions, compiled)


def rescore_batch(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    compiled: bool = False,
) -> list[Neighbors]:
    """rescore() for any number of queries, QUERY_CHUNK at a time."""
    compiled = compiled and dots.RESCORES
    # dots.c reads the table in place: nothing to gather first.
    groups = (
        [(slice(0, len(queries)), False)] if compiled else _groups(store, positions, len(queries))
    )
    results: list[Neighbors] = []
    for group, gather in groups:
        results.extend(_rescore_group(store, queries[group], positions[group], gather, compiled))
    return results


# Rows of a table for ids: (len(ids), width), laid out as gather_rows lays them out.
Source = Callable[[np.ndarray], np.ndarray]


def _groups(
    store: RowStore, positions: Sequence[np.ndarray] | np.ndarray, queries: int
) -> list[tuple[slice, bool]]:
    """Consecutive queries, and whether their candidate rows are gathered together first.

    A row stored by columns is read from `width` places, one cache line each; rows gathered
    together share those lines once they are dense enough, at least one row in SHARING of the
    table. So the candidates of many queries are gathered together, at most GATHER_BUDGET
    bytes of them, when they are that dense (the default table: the rescoring of a batch of 256
    queries 1.3-1.6x as fast, of 128 1.05-1.2x; BENCHMARKS.md). The scores are the same to the
    bit: the same float32 values, summed the same way, only read from a smaller copy. Rows
    stored row after row, sparse candidates, or one query's candidates beyond the budget are
    read from the table itself.
    """
    rows = store.table.rows
    if not stored_by_columns(store.vectors) or sum(map(len, positions)) * SHARING < rows:
        return [(slice(0, queries), False)]
    most = max(1, GATHER_BUDGET // (4 * store.vectors.shape[1]))
    groups: list[tuple[slice, bool]] = []
    start, held = 0, 0
    for query, candidates in enumerate(positions):
        if query > start and held + len(candidates) > most:
            groups.append((slice(start, query), held <= most and held * SHARING >= rows))
            start, held = query, 0
        held += len(candidates)
    groups.append((slice(start, queries), held <= most and held * SHARING >= rows))
    return groups


def _rescore_group(
    store: RowStore,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    gather: bool,
    compiled: bool,
) -> list[Neighbors]:
    """rescore() of one group, QUERY_CHUNK queries at a time (its gathered rows, if any, are
    freed on return: one group's at a time)."""
    source = _gathered(store, positions) if gather else partial(gather_rows, store.vectors)
    results: list[Neighbors] = []
    for start in range(0, len(queries), QUERY_CHUNK):
        part = slice(start, start + QUERY_CHUNK)
        results.extend(_rescore(store, source, queries[part], positions[part], compiled))
    return results


def _gathered(store: RowStore, positions: Sequence[np.ndarray] | np.ndarray) -> Source:
    """Some queries' candidate rows gathered in one pass, then taken from by table id."""
    flat = np.unique(np.concatenate([np.asarray(p, dtype=np.int64) for p in positions]))
    ids = flat[flat.searchsorted(0) :]
    rows = gather_rows(store.vectors, ids)
    return lambda wanted: gather_rows(rows, ids.searchsorted(wanted))


def _rescore(
    store: RowStore,
    source: Source,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
    compiled: bool,
) -> list[Neighbors]:
    counts = [len(p) for p in positions]
    flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in positions])
    owner = np.repeat(np.arange(len(queries)), counts)
    valid = flat >= 0
    ids, owner = flat[valid], owner[valid]
    # Zero rows have no direction (a pass can keep them when it keeps every row).
    keep = (store.norms64[ids] > 0) & ~_excluded(queries, owner, ids, store.table.rows)
    ids, owner = ids[keep], owner[keep]
    directions = np.stack([q.vector for q in queries])
    if compiled:
        scores = compiled_dots(store.vectors, ids, directions, owner)
    else:
        scores = _dots(source, ids, directions, owner)
    scores /= store.norms64[ids]
    order = np.lexsort((ids, -scores, owner))
    ids, scores, owner = ids[order], scores[order], owner[order]
    bounds = np.searchsorted(owner, np.arange(len(queries) + 1))
    starts, ends = bounds[:-1], bounds[1:]
    return [
        Neighbors(ids=ids[start:stop], scores=scores[start:stop])
        for query, start, end in zip(queries, starts, ends, strict=True)
        for stop in [min(start + query.k, end)]
    ]


def rescore_one(store: RowStore, query: NeighborQuery, positions: np.ndarray) -> Neighbors:
    """One query's candidates (-1 pads; at most CHUNK, for the temporaries) rescored: the same
    answer as rescore_batch's, ids and scores to the last bit (tests/engine/test_rescoring.py)."""
    ids = np.sort(positions)  # row order for the gather; ties then fall to the lower id
    ids = ids[ids.searchsorted(0) :]
    norms = store.norms64[ids]
    keep = _kept_one(store, query, ids, norms)
    if keep is not None:
        ids, norms = ids[keep], norms[keep]
    # Summed as _dots and dots.c sum, to the last bit: float64 products laid out row by row,
    # each row's summed along it (numpy's pairwise sum; summed down the columns, the last bits
    # differ).
    products = np.multiply(gather_rows(store.vectors, ids), query.vector, dtype=np.float64,
                           order="C")  # fmt: skip
    scores = np.add.reduce(products, axis=1) / norms
    best = np.argsort(-scores, kind="stable")[: query.k]
    return Neighbors(ids=ids[best], scores=scores[best])


def _kept_one(
    store: RowStore, query: NeighborQuery, ids: np.ndarray, norms: np.ndarray
) -> np.ndarray | None:
    """Which of one query's candidates are neither zero rows nor excluded; None: all are."""
    keep = None if store.zero.size == 0 else norms > 0
    if not query.exclude:
        return keep
    excluded = np.fromiter(query.exclude, dtype=np.int64, count=len(query.exclude))
    if ids.size * excluded.size <= SMALL_EXCLUSION_PRODUCT:
        kept = (ids[:, None] != excluded[None, :]).all(axis=1)
    else:
        kept = ~np.isin(ids, excluded)
    return kept if keep is None else kept & keep


def _dots(source: Source, ids: np.ndarray, directions: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Float64 dot products of rows `ids` with their owners' directions, CHUNK rows at a time.

    Each dot product is summed on its own, so a score never depends on the other candidates;
    the chunks only keep the float64 temporaries in cache.
    """
    sums = np.empty(ids.size)
    for start in range(0, ids.size, CHUNK):
        # Gathered in row order: rows stored by columns (tables/layout.py) are read from
        # `width` places each, and in order those reads share cache lines (2x faster).
        order = start + np.argsort(ids[start : start + CHUNK], kind="stable")
        raw = source(ids[order]).astype(np.float64)
        sums[order] = np.sum(raw * directions[owner[order]], axis=1)
    return sums


def compiled_dots(
    vectors: np.ndarray, ids: np.ndarray, directions: np.ndarray, owner: np.ndarray
) -> np.ndarray:
    """_dots by dots.c, read from the table in place: each row's float64 products summed as
    numpy sums them, the same bits (tests/engine/test_compiled_steps.py). Only where
    dots.RESCORES; IndexError for an id outside the table (the C reads what it is given)."""
    assert dots.LIBRARY is not None
    order = np.argsort(ids, kind="stable")  # each column read forward
    ids = np.ascontiguousarray(ids[order], dtype=np.int64)
    if ids.size and (ids[0] < 0 or ids[-1] >= len(vectors)):
        raise IndexError(f"row {ids[0] if ids[0] < 0 else ids[-1]} outside {len(vectors)} rows")
    owner = np.ascontiguousarray(owner[order], dtype=np.int64)
    directions = np.ascontiguousarray(directions, dtype=np.float64)
    width = vectors.shape[1]
    if directions.shape[1] != width:
        raise DimensionMismatch(directions.shape[1], width)
    sums = np.empty(ids.size)
    if ids.size:
        row_step, column_step = (stride // FLOAT32 for stride in vectors.strides)
        failed = dots.LIBRARY.dots_rescore(
            vectors.ctypes.data, row_step, column_step, width, ids.ctypes.data,
            owner.ctypes.data, ids.size, directions.ctypes.data, sums.ctypes.data,
        )  # fmt: skip
        if failed:
            raise MemoryError("no room for the rescoring's products")
    out = np.empty_like(sums)
    out[order] = sums
    return out


def gather_rows(vectors: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Rows `ids` of `vectors` as a (len(ids), width) array, whatever the layout.

    Rows stored by columns are taken column by column (np.take on the transposed view): each
    column's reads then run forward through one contiguous column. On a 1M x 300 table, 240
    rows took 2.0 ms against 6.1 ms by plain fancy indexing, which walks row by row across
    every column.
    """
    if stored_by_columns(vectors):
        return np.take(vectors.T, ids, axis=1).T
    return vectors[ids]


def stored_by_columns(vectors: np.ndarray) -> bool:
    """Whether `vectors` are stored by columns (their transpose is C order)."""
    return bool(vectors.flags.f_contiguous and not vectors.flags.c_contiguous)


def _excluded(
    queries: Sequence[NeighborQuery], owner: np.ndarray, ids: np.ndarray, rows: int
) -> np.ndarray:
    """Which (query, row) candidate pairs name a row the query excludes."""
    parts = [
        i * rows + np.fromiter(query.exclude, dtype=np.int64, count=len(query.exclude))
        for i, query in enumerate(queries)
        if query.exclude
    ]
    if not parts:
        return np.zeros(ids.size, dtype=bool)
    pairs, excluded = owner * rows + ids, np.concatenate(parts)
    if pairs.size * excluded.size <= SMALL_EXCLUSION_PRODUCT:
        # np.isin sorts both sides: for one query's few exclusions that cost more than the
        # rest of its rescoring (70 us of a 500 us fast-scan query).
        return (pairs[:, None] == excluded[None, :]).any(axis=1)
    return np.isin(pairs, excluded)

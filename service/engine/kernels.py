"""Where candidate rows come from: a pass over the unit rows for a whole batch of directions.

Two interchangeable kernels hold the unit-normalised rows once each:
- BlasKernel (default): the rows transposed, so a batch is one plain matrix product
  (directions @ rows^T without a transposed operand); measured the fastest here for every batch
  size from 1 to 512 (benchmarks/engine_throughput.py, BENCHMARKS.md).
- FaissKernel: a FAISS IndexFlatIP and its own exhaustive search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

import faiss
import numpy as np

from service.engine.topk import candidate_rows

KernelName = Literal["blas", "faiss"]
# Up to this many directions, one matrix-vector product each beats a matrix product, which
# first packs the whole table (1 thread, 30,522 x 384: 0.9 ms per vector, 3.2-3.9 ms for any
# product of 2 to 16).
SMALL_BATCH = 3
# Extra candidates per query where a cut at a fixed count (FAISS's search, and on top of its
# slack, output scoring) could otherwise lose a near-tie to float32 rounding.
RESCORE_MARGIN = 4
# The most float32 scores a pass holds at once (directions x rows): a batch's temporaries stay
# the same size whatever the table. Batches of up to 137 directions score the default table
# (30,522 rows) in one block; a full batch of 256 takes two.
SCORES_BUDGET = 16 * 2**20


def rows_per_block(directions: int, rows: int) -> int:
    """Rows scored at once for `directions` directions within SCORES_BUDGET."""
    return max(1, min(rows, SCORES_BUDGET // (4 * max(1, directions))))


Excluded = Sequence[np.ndarray] | None


class Kernel(Protocol):
    """Scores directions against the first `searchable` unit rows."""

    description: str
    # Whether candidates() leaves out each query's excluded positions itself (then it needs
    # only k candidates, not k plus the exclusions).
    masks_exclusions: bool

    @property
    def nbytes(self) -> int:
        """Bytes held for the unit rows."""
        ...

    def scores(self, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
        """(batch, stop - start) float32 inner products with index positions start..stop."""
        ...

    def candidates(
        self, directions: np.ndarray, depth: int, searchable: int, excluded: Excluded = None
    ) -> Sequence[np.ndarray] | np.ndarray:
        """Per direction, positions of (at least) its `depth` best rows, unordered; -1 pads.

        `excluded[i]`: index positions direction i must not get (when masks_exclusions).
        """
        ...


class BlasKernel:
    """Unit rows stored transposed; one BLAS matrix product per batch."""

    description = "exact inner product, BLAS matrix product"
    masks_exclusions = True

    def __init__(self, unit: np.ndarray) -> None:
        self.rows_t = np.ascontiguousarray(unit.T)

    @property
    def nbytes(self) -> int:
        """Bytes held for the unit rows."""
        return int(self.rows_t.nbytes)

    def scores(self, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
        """(batch, stop - start) float32 inner products with index positions start..stop."""
        rows_t = self.rows_t[:, start:stop]
        if len(directions) <= SMALL_BATCH:
            return np.stack([direction @ rows_t for direction in directions])
        return directions @ rows_t

    def candidates(
        self, directions: np.ndarray, depth: int, searchable: int, excluded: Excluded = None
    ) -> list[np.ndarray]:
        """Per direction, positions of its `depth` best rows and any that may tie with them,
        its excluded positions left out."""
        slack = float32_dot_error(self.rows_t.shape[0])
        block = rows_per_block(len(directions), searchable)
        if block >= searchable:
            scores = mask(self.scores(directions, 0, searchable), excluded, 0)
            return candidate_rows(scores, depth, slack)
        return _blocked_candidates(self, directions, depth, searchable, block, slack, excluded)


class FaissKernel:
    """Unit rows in a FAISS IndexFlatIP, searched by FAISS."""

    description = "exact inner product, FAISS IndexFlatIP"
    masks_exclusions = False

    def __init__(self, unit: np.ndarray) -> None:
        self.index = faiss.IndexFlatIP(unit.shape[1])
        self.index.add(np.ascontiguousarray(unit, dtype=np.float32))
        size = self.index.ntotal * unit.shape[1]
        # A read-only view of FAISS's own copy, so the rows are held once.
        self.rows = faiss.rev_swig_ptr(self.index.get_xb(), size).reshape(-1, unit.shape[1])
        self.rows.flags.writeable = False

    @property
    def nbytes(self) -> int:
        """Bytes held for the unit rows."""
        return int(self.rows.nbytes)

    def scores(self, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
        """(batch, stop - start) float32 inner products with index positions start..stop."""
        return directions @ self.rows[start:stop].T

    def candidates(
        self, directions: np.ndarray, depth: int, searchable: int, excluded: Excluded = None
    ) -> np.ndarray:
        """(batch, depth + margin) positions of each direction's best rows (ties cut arbitrarily).

        FAISS cuts at a fixed count, so it returns RESCORE_MARGIN extra rows: float32 rounding
        near the k-th place cannot then drop a true neighbour before the exact rescoring.
        """
        depth = min(depth + RESCORE_MARGIN, searchable)
        params = None
        if searchable < self.index.ntotal:
            selector = faiss.IDSelectorRange(0, searchable)
            params = faiss.SearchParameters(sel=selector)  # type: ignore[call-arg]
        return self.index.search(directions, depth, params=params)[1]


def _blocked_candidates(
    kernel: BlasKernel,
    directions: np.ndarray,
    depth: int,
    searchable: int,
    block: int,
    slack: float,
    excluded: Excluded,
) -> list[np.ndarray]:
    """candidate_rows over blocks of rows, merged: the same rows as one pass over all of them.

    A row dropped in its block scored below that block's depth-th best minus the slack, which
    is at most the depth-th best of all rows minus the slack, so one pass would drop it too; and
    every row of the overall depth best survives its block, so the merged bound is the same.
    """
    positions: list[list[np.ndarray]] = [[] for _ in directions]
    values: list[list[np.ndarray]] = [[] for _ in directions]
    for start in range(0, searchable, block):
        stop = min(start + block, searchable)
        scores = mask(kernel.scores(directions, start, stop), excluded, start)
        for query, columns in enumerate(candidate_rows(scores, min(depth, stop - start), slack)):
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
        inside = positions[(positions >= start) & (positions < stop)]
        scores[row, inside - start] = -np.inf
    return scores


def float32_dot_error(width: int, scale: float = 1.0) -> float:
    """A bound on the rounding error of a float32 dot product of `width` terms.

    |error| <= width * 2^-24 * sum |a_i b_i| <= width * 2^-24 * |a| |b|; doubled for safety.
    `scale` is |a| |b| (1 for unit vectors).
    """
    return width * 2.0**-23 * scale


def make_kernel(name: KernelName, unit: np.ndarray) -> Kernel:
    """The kernel called `name`, holding `unit` rows."""
    return BlasKernel(unit) if name == "blas" else FaissKernel(unit)

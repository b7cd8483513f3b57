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
# Extra candidates per query where a cut at a fixed count (FAISS's search, and on top of their
# slack, output scoring and 3CosMul) could otherwise lose a near-tie to float32 rounding.
RESCORE_MARGIN = 4


class Kernel(Protocol):
    """Scores directions against the first `searchable` unit rows."""

    description: str

    @property
    def nbytes(self) -> int:
        """Bytes held for the unit rows."""
        ...

    def scores(self, directions: np.ndarray, searchable: int) -> np.ndarray:
        """(batch, searchable) float32 inner products."""
        ...

    def candidates(
        self, directions: np.ndarray, depth: int, searchable: int
    ) -> Sequence[np.ndarray] | np.ndarray:
        """Per direction, positions of (at least) its `depth` best rows, unordered; -1 pads."""
        ...


class BlasKernel:
    """Unit rows stored transposed; one BLAS matrix product per batch."""

    description = "exact inner product, BLAS matrix product"

    def __init__(self, unit: np.ndarray) -> None:
        self.rows_t = np.ascontiguousarray(unit.T)

    @property
    def nbytes(self) -> int:
        """Bytes held for the unit rows."""
        return int(self.rows_t.nbytes)

    def scores(self, directions: np.ndarray, searchable: int) -> np.ndarray:
        """(batch, searchable) float32 inner products."""
        rows_t = self.rows_t[:, :searchable]
        if len(directions) <= SMALL_BATCH:
            return np.stack([direction @ rows_t for direction in directions])
        return directions @ rows_t

    def candidates(self, directions: np.ndarray, depth: int, searchable: int) -> list[np.ndarray]:
        """Per direction, positions of its `depth` best rows and any that may tie with them."""
        slack = float32_dot_error(self.rows_t.shape[0])
        return candidate_rows(self.scores(directions, searchable), depth, slack)


class FaissKernel:
    """Unit rows in a FAISS IndexFlatIP, searched by FAISS."""

    description = "exact inner product, FAISS IndexFlatIP"

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

    def scores(self, directions: np.ndarray, searchable: int) -> np.ndarray:
        """(batch, searchable) float32 inner products."""
        return directions @ self.rows[:searchable].T

    def candidates(self, directions: np.ndarray, depth: int, searchable: int) -> np.ndarray:
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


def float32_dot_error(width: int, scale: float = 1.0) -> float:
    """A bound on the rounding error of a float32 dot product of `width` terms.

    |error| <= width * 2^-24 * sum |a_i b_i| <= width * 2^-24 * |a| |b|; doubled for safety.
    `scale` is |a| |b| (1 for unit vectors).
    """
    return width * 2.0**-23 * scale


def make_kernel(name: KernelName, unit: np.ndarray) -> Kernel:
    """The kernel called `name`, holding `unit` rows."""
    return BlasKernel(unit) if name == "blas" else FaissKernel(unit)

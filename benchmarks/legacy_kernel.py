"""The exact kernel as it was before tables were held once, kept only to measure against.

It stored a second, unit-normalised float32 copy of the rows, transposed, so that a batch was
one plain matrix product (directions @ rows^T without a transposed operand). The service now
scores the table's own raw rows and divides by their norms (service/engine/search/kernels.py
BlasKernel); benchmarks/engine_throughput.py runs both side by side.
"""

from __future__ import annotations

import numpy as np

from service.engine.search.kernels import (
    Excluded,
    _blocked_candidates,
    mask,
    mask_rows,
    rows_per_block,
)
from service.engine.search.products import SMALL_BATCH, float32_dot_error
from service.engine.search.selection import candidate_rows
from service.engine.search.store import RowStore


class TransposedUnitKernel:
    """Unit rows stored transposed (the second copy); one BLAS matrix product per batch."""

    description = "exact inner product, BLAS matrix product over a transposed unit copy"
    masks_exclusions = True
    compiled = False

    def __init__(self, store: RowStore) -> None:
        scales = np.zeros(store.rows, dtype=np.float32)
        scales[store.indexed] = 1 / store.norms64[store.indexed]
        self.rows_t = np.ascontiguousarray((store.vectors * scales[:, None]).T)
        self.always = np.empty(0, dtype=np.int64)
        self.masked = store.zero
        self.error = float32_dot_error(store.width)

    @property
    def nbytes(self) -> int:
        """Bytes held for the unit rows."""
        return int(self.rows_t.nbytes)

    def scores(self, directions: np.ndarray, start: int, stop: int) -> np.ndarray:
        """(batch, stop - start) float32 inner products with rows start..stop."""
        rows_t = self.rows_t[:, start:stop]
        if len(directions) <= SMALL_BATCH:
            return np.stack([direction @ rows_t for direction in directions])
        return directions @ rows_t

    def candidates(
        self, directions: np.ndarray, depth: int, searchable: int, excluded: Excluded = None
    ) -> list[np.ndarray]:
        """Per direction, rows of its `depth` best and any within the slack."""
        block = rows_per_block(len(directions), searchable)
        if block < searchable:
            return _blocked_candidates(self, directions, depth, searchable, block, excluded)  # type: ignore[arg-type]
        scores = self.mask(self.scores(directions, 0, searchable), excluded, 0)
        return candidate_rows(scores, depth, self.error)

    def mask(self, scores: np.ndarray, excluded: Excluded, start: int) -> np.ndarray:
        """`scores` with zero rows and each query's exclusions at -inf."""
        return mask_rows(mask(scores, excluded, start), self.masked, start)

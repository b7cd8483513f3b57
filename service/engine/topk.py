"""Top-k selection over score vectors and matrices."""

from __future__ import annotations

import numpy as np


def top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values, largest first (ties: lower index first)."""
    k = min(k, values.size)
    if k <= 0:
        return np.empty(0, dtype=np.int64)
    candidates = candidate_rows(values[None, :], k)[0]
    return rank(candidates, values[candidates])


def candidate_rows(scores: np.ndarray, depth: int) -> np.ndarray:
    """Per row of `scores`, the column indices of its `depth` largest values (unordered)."""
    columns = scores.shape[1]
    if depth >= columns:
        return np.broadcast_to(np.arange(columns), scores.shape)
    # argpartition on -scores would copy the whole matrix; partitioning for the top is cheaper.
    return np.argpartition(scores, columns - depth, axis=1)[:, columns - depth :]


def rank(ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """`ids` ordered by descending score, ties broken by the lower id."""
    return ids[np.lexsort((ids, -scores))].astype(np.int64)

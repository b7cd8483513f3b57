"""Top-k selection over score matrices computed in float32.

Candidates are every column within `slack` of a row's depth-th largest score, not exactly
`depth` columns: float32 products may differ in their last bits between batch sizes, and rows
may tie exactly, so a fixed cut could keep different rows for the same query. With the slack,
every row that can belong to the exact top-k is kept, whatever the batch.
"""

from __future__ import annotations

import numpy as np

# Partition this many extra columns per row; only a row with more near-ties than that is
# scanned in full.
TIE_ROOM = 16


def candidate_rows(scores: np.ndarray, depth: int, slack: np.ndarray | float) -> list[np.ndarray]:
    """Per row of `scores`, the columns scoring within `slack` of its depth-th largest value."""
    rows, columns = scores.shape
    room = depth + TIE_ROOM
    if room >= columns:
        return [np.arange(columns)] * rows
    best = np.argpartition(scores, columns - room, axis=1)[:, columns - room :]
    values = np.take_along_axis(scores, best, axis=1)
    kth = np.partition(values, TIE_ROOM, axis=1)[:, TIE_ROOM]
    bound = kth - np.broadcast_to(slack, (rows,))
    crowded = values.min(axis=1) >= bound  # every partitioned column ties: look at them all
    return [
        np.flatnonzero(scores[i] >= bound[i]) if crowded[i] else best[i][values[i] >= bound[i]]
        for i in range(rows)
    ]


def rank(ids: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """`ids` ordered by descending score, ties broken by the lower id."""
    return ids[np.lexsort((ids, -scores))].astype(np.int64)

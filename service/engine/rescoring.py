"""The exact second step of every search: candidates rescored in float64 from the raw rows.

All queries of a batch are rescored in a few array operations. Each score is one dot product
summed on its own (never a matrix product whose blocking depends on how many candidates there
are), so a query's answer is the same whatever else was in its batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from service.engine.queries import NeighborQuery, Neighbors

if TYPE_CHECKING:
    from service.engine.index import SimilarityIndex


def rescore(
    index: SimilarityIndex,
    queries: Sequence[NeighborQuery],
    positions: Sequence[np.ndarray] | np.ndarray,
) -> list[Neighbors]:
    """Each query's candidates scored in float64 from the raw rows, best k first (ties: id)."""
    counts = [len(p) for p in positions]
    flat = np.concatenate([np.asarray(p, dtype=np.int64) for p in positions])
    owner = np.repeat(np.arange(len(queries)), counts)
    valid = flat >= 0
    ids, owner = index.indexed_rows[flat[valid]], owner[valid]
    keep = ~_excluded(queries, owner, ids, index.table.rows)
    ids, owner = ids[keep], owner[keep]
    directions = np.stack([query.vector for query in queries])
    raw = index.table.vectors[ids].astype(np.float64)
    # Each dot product summed on its own: a score never depends on the other candidates.
    scores = np.sum(raw * directions[owner], axis=1) / index.norms64[ids]
    order = np.lexsort((ids, -scores, owner))
    ids, scores, owner = ids[order], scores[order], owner[order]
    bounds = np.searchsorted(owner, np.arange(len(queries) + 1))
    starts, ends = bounds[:-1], bounds[1:]
    return [
        Neighbors(ids=ids[start:stop], scores=scores[start:stop])
        for query, start, end in zip(queries, starts, ends, strict=True)
        for stop in [min(start + query.k, end)]
    ]


def _excluded(
    queries: Sequence[NeighborQuery], owner: np.ndarray, ids: np.ndarray, rows: int
) -> np.ndarray:
    """Which (query, row) candidate pairs name a row the query excludes."""
    keys = [i * rows + row for i, query in enumerate(queries) for row in query.exclude]
    if not keys:
        return np.zeros(ids.size, dtype=bool)
    return np.isin(owner * rows + ids, np.asarray(keys, dtype=np.int64))

"""How rows moved between two versions of a table: two checkpoints, or two tables.

The versions are compared over their shared vocabulary (every row, for checkpoints of one
set; the tokens both tables have, for two tables): per row, the cosine of its two versions,
their L2 distance and both norms, computed in float64 from the float32 rows CHUNK_ROWS pairs at
a time, never from a float64 copy of a table. Rows that moved most (lowest cosine) and least
(highest cosine) are ranked exactly: ties by the row's place in the `from` version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from service.engine.analysis.statistics import Correlation, spearman
from service.engine.analysis.trajectory import row_cosines, row_norms
from service.engine.tables.checkpoints import CHUNK_ROWS
from service.engine.tables.table import EmbeddingTable


@dataclass(frozen=True)
class Movement:
    """Each shared token's two rows (`source_rows` in the from version, `target_rows` in the
    to version) and how the row moved; cosine is NaN where either row has no direction."""

    source_rows: np.ndarray
    target_rows: np.ndarray
    cosines: np.ndarray
    distances: np.ndarray
    source_norms: np.ndarray
    target_norms: np.ndarray

    @property
    def shared(self) -> int:
        """How many tokens the two versions share."""
        return int(self.source_rows.size)

    @property
    def directed(self) -> np.ndarray:
        """Positions (in the shared arrays) of the rows with a direction in both versions."""
        return np.flatnonzero(~np.isnan(self.cosines))


def shared_rows(source: EmbeddingTable, target: EmbeddingTable) -> tuple[np.ndarray, np.ndarray]:
    """The rows of the tokens both tables have, in each table, in the order of `source`."""
    if source.tokens is target.tokens or source.tokens == target.tokens:
        every = np.arange(source.rows, dtype=np.int64)
        return every, every
    lookup = target.token_to_id
    found = (lookup.get(token, -1) for token in source.tokens)
    targets = np.fromiter(found, dtype=np.int64, count=source.rows)
    sources = np.flatnonzero(targets >= 0)
    return sources, targets[sources]


def measure(
    source: np.ndarray, target: np.ndarray, source_rows: np.ndarray, target_rows: np.ndarray
) -> Movement:
    """Cosine, L2 distance and norms of each row pair, CHUNK_ROWS pairs at a time."""
    size = source_rows.size
    cosines, distances, source_norms, target_norms = (np.empty(size) for _ in range(4))
    for start in range(0, size, CHUNK_ROWS):
        part = slice(start, min(start + CHUNK_ROWS, size))
        before, after = source[source_rows[part]], target[target_rows[part]]
        source_norms[part], target_norms[part] = row_norms(before), row_norms(after)
        before64, after64 = before.astype(np.float64), after.astype(np.float64)
        distances[part] = np.sqrt(np.sum((after64 - before64) ** 2, axis=1))
        cosines[part] = row_cosines(after64, before64, target_norms[part], source_norms[part])
    return Movement(source_rows, target_rows, cosines, distances, source_norms, target_norms)


def most_moved(movement: Movement, limit: int) -> np.ndarray:
    """Positions of the `limit` directed rows with the lowest cosine, lowest first."""
    return _ranked(movement, movement.cosines, limit)


def least_moved(movement: Movement, limit: int) -> np.ndarray:
    """Positions of the `limit` directed rows with the highest cosine, highest first."""
    return _ranked(movement, -movement.cosines, limit)


def _ranked(movement: Movement, keys: np.ndarray, limit: int) -> np.ndarray:
    """The `limit` directed positions with the smallest keys, ties by source row; exact.

    Only the rows at or below the limit-th key are sorted, however many of them tie there.
    """
    positions = movement.directed
    if positions.size > limit:
        threshold = np.partition(keys[positions], limit - 1)[limit - 1]
        positions = positions[keys[positions] <= threshold]
    order = np.lexsort((movement.source_rows[positions], keys[positions]))
    return positions[order[:limit]]


@dataclass(frozen=True)
class CountFigures:
    """How the movement follows the log count, over the shared rows with a positive count."""

    rows: int
    distance: Correlation | None
    cosine: Correlation | None


def count_figures(movement: Movement, counts: np.ndarray) -> CountFigures:
    """Spearman of log count (of the target rows) with distance and with cosine."""
    values = counts[movement.target_rows]
    counted = np.flatnonzero(values > 0)
    directed = counted[~np.isnan(movement.cosines[counted])]
    return CountFigures(
        rows=int(counted.size),
        distance=spearman(np.log(values[counted]), movement.distances[counted]),
        cosine=spearman(np.log(values[directed]), movement.cosines[directed]),
    )


@dataclass(frozen=True)
class NeighbourChange:
    """A token's top-k neighbours in both versions, compared."""

    overlap: int
    entered: list[str]  # in the after list only (and in the before version's vocabulary)
    left: list[str]  # in the before list only (and in the after version's vocabulary)
    unshared: list[str]  # in one list, but not in the other version's vocabulary at all


def compare_neighbours(
    before: Sequence[str], after: Sequence[str], source: EmbeddingTable, target: EmbeddingTable
) -> NeighbourChange:
    """What entered and left a token's neighbour list between two versions."""
    kept_before, kept_after = set(before), set(after)
    unshared = [t for t in before if target.find(t) is None]
    unshared += [t for t in after if source.find(t) is None]
    gone = set(unshared)
    return NeighbourChange(
        overlap=len(kept_before & kept_after),
        entered=[t for t in after if t not in kept_before and t not in gone],
        left=[t for t in before if t not in kept_after and t not in gone],
        unshared=unshared,
    )

"""Rows followed across a table's checkpoints, and how training moved the whole table.

A trajectory places some rows at every checkpoint in one PCA basis (the explorer's, fitted on
the last checkpoint), with each row's norm, cosine and L2 distance to its own initial row
(checkpoint 0). The summary passes once over every checkpoint (chunk by chunk, never a float64
copy of a table) and says, per checkpoint, how far rows moved from their initial rows and, when
the table has counts, how that and the norm follow the count: Spearman's rho of log count with
the distance from the initial row ("rare words stall") and with the norm.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from service.engine.analysis.diagnostics import count_column
from service.engine.analysis.projection import Basis
from service.engine.analysis.statistics import Correlation, spearman
from service.engine.tables.checkpoints import CHUNK_ROWS, Versions


@dataclass(frozen=True)
class Trajectory:
    """Per checkpoint (axis 0) and row (axis 1); NaN where a row has no direction."""

    coordinates: np.ndarray  # checkpoints x rows x dims
    norms: np.ndarray
    cosines: np.ndarray  # to the row's initial row
    distances: np.ndarray  # L2, to the row's initial row


def follow(versions: Versions, rows: np.ndarray, basis: Basis, dims: int) -> Trajectory:
    """`rows` at every checkpoint, projected on the first `dims` components of `basis`."""
    count, size = versions.count, rows.size
    coordinates = np.full((count, size, dims), np.nan)
    norms, cosines, distances = (np.empty((count, size)) for _ in range(3))
    initial = versions.rows(0, rows)
    initial_norms = row_norms(versions.vectors(0)[rows])
    for checkpoint in range(count):
        stored = versions.vectors(checkpoint)[rows]
        raw = stored.astype(np.float64)
        norms[checkpoint] = lengths = row_norms(stored)
        has_direction = lengths > 0
        unit = raw[has_direction] / lengths[has_direction, None]
        coordinates[checkpoint, has_direction] = basis.project(unit, dims)
        cosines[checkpoint] = row_cosines(raw, initial, lengths, initial_norms)
        distances[checkpoint] = np.sqrt(np.sum((raw - initial) ** 2, axis=1))
    return Trajectory(coordinates, norms, cosines, distances)


def row_norms(rows: np.ndarray) -> np.ndarray:
    """float64 L2 norms of float32 rows, summed as the index's RowStore sums them (so a row's
    norm and direction here are exactly those /projection uses)."""
    return np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64))


def row_cosines(
    raw: np.ndarray, initial: np.ndarray, norms: np.ndarray, initial_norms: np.ndarray
) -> np.ndarray:
    """Cosine of each float64 row pair from their norms; NaN where either row is zero."""
    scale = norms * initial_norms
    dots = np.einsum("ij,ij->i", raw, initial)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(scale > 0, dots / np.where(scale > 0, scale, 1.0), np.nan)


@dataclass(frozen=True)
class CheckpointFigures:
    """How one checkpoint's rows stand against their initial rows, over the whole table."""

    mean_norm: float
    mean_distance: float  # L2 distance to the initial row, over every row
    mean_cosine: float  # to the initial row, over rows with a direction in both
    distance_by_count: Correlation | None  # log count vs distance, rows with a count
    norm_by_count: Correlation | None  # log count vs norm


@dataclass(frozen=True)
class Summary:
    """The figures of every checkpoint, and the count column they were correlated with."""

    checkpoints: list[CheckpointFigures]
    count_column: str | None
    counted_rows: int


def summarise(versions: Versions) -> Summary:
    """One pass over every checkpoint beside checkpoint 0, chunk by chunk."""
    column, counts = count_column(versions.table)
    counted = np.flatnonzero(counts > 0) if counts.size else np.empty(0, dtype=np.int64)
    logs = np.log(counts[counted]) if counted.size else np.empty(0)
    figures = [_figures(versions, c, counted, logs) for c in range(versions.count)]
    return Summary(figures, column if counts.size else None, int(counted.size))


def _figures(
    versions: Versions, checkpoint: int, counted: np.ndarray, logs: np.ndarray
) -> CheckpointFigures:
    rows = versions.table.rows
    norms, distances, cosines = np.empty(rows), np.empty(rows), np.empty(rows)
    first, current = versions.vectors(0), versions.vectors(checkpoint)
    for start in range(0, rows, CHUNK_ROWS):
        part = slice(start, min(start + CHUNK_ROWS, rows))
        initial, raw = first[part].astype(np.float64), current[part].astype(np.float64)
        norms[part] = row_norms(current[part])
        distances[part] = np.sqrt(np.sum((raw - initial) ** 2, axis=1))
        cosines[part] = row_cosines(raw, initial, norms[part], row_norms(first[part]))
    directed = cosines[~np.isnan(cosines)]
    return CheckpointFigures(
        mean_norm=float(norms.mean()),
        mean_distance=float(distances.mean()),
        mean_cosine=float(directed.mean()) if directed.size else float("nan"),
        distance_by_count=spearman(logs, distances[counted]) if counted.size else None,
        norm_by_count=spearman(logs, norms[counted]) if counted.size else None,
    )


class TrainingSummary:
    """One load's summary, computed on first use (thread-safe) and kept with the load."""

    def __init__(self, versions: Versions) -> None:
        self.versions = versions
        self._lock = threading.Lock()
        self._summary: Summary | None = None

    def get(self) -> Summary:
        """The summary, computed by the first caller while the others wait."""
        with self._lock:
            if self._summary is None:
                self._summary = summarise(self.versions)
            return self._summary

"""/projection and /project answers: rows (and raw vectors) in the table's PCA basis."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from embedding_service.models.answers import Matched, Metadata, Readable


@dataclass(frozen=True)
class ProjectedPoint(Readable):
    """A table row on the picture (z for three dimensions)."""

    token: str
    id: int
    norm: float
    x: float
    y: float
    z: float | None = None
    metadata: Metadata = field(default_factory=dict)


@dataclass(frozen=True)
class ProjectedVector:
    """A raw vector on the picture, normalised first like every row."""

    x: float
    y: float
    z: float | None = None


@dataclass(frozen=True)
class Projection(Matched):
    """A PCA picture of a table's rows: the basis's explained variance and the points."""

    method: str
    dims: int
    explained_variance_ratio: list[float]
    sample_rows: int
    points: list[ProjectedPoint]
    fit: str = "table"
    # With selection="words": how many of the points are whole-word rows.
    words: int | None = None

    @property
    def coordinates(self) -> np.ndarray:
        """The points' coordinates as an (n, dims) array."""
        return coordinates(self.points, self.dims)


def coordinates(points: list[ProjectedPoint] | list[ProjectedVector], dims: int) -> np.ndarray:
    """Points' x, y (and z) as an (n, dims) float64 array."""
    if dims == 3:
        return np.array([(p.x, p.y, p.z) for p in points], dtype=np.float64).reshape(-1, 3)
    return np.array([(p.x, p.y) for p in points], dtype=np.float64).reshape(-1, 2)

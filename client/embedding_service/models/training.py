"""/trajectory and /drift answers: rows followed through a table's versions, two compared."""

from __future__ import annotations

from dataclasses import dataclass, field

from embedding_service.models.answers import Matched, Metadata
from embedding_service.models.diagnostics import SpearmanFigure
from embedding_service.models.search import Neighbor
from embedding_service.models.tables import Checkpoint


@dataclass(frozen=True)
class CheckpointSummary(Checkpoint):
    """How the whole table stands at one checkpoint against checkpoint 0."""

    mean_norm: float
    mean_distance_to_initial: float
    mean_cosine_to_initial: float | None = None
    spearman_distance: SpearmanFigure | None = None
    spearman_norm: SpearmanFigure | None = None


@dataclass(frozen=True)
class TrajectoryPoint:
    """One row at every checkpoint: lists indexed by checkpoint (None: no direction)."""

    token: str
    id: int
    x: list[float | None]
    y: list[float | None]
    norm: list[float]
    cosine_to_initial: list[float | None]
    distance_to_initial: list[float]
    z: list[float | None] | None = None
    metadata: Metadata = field(default_factory=dict)


@dataclass(frozen=True)
class Trajectory(Matched):
    """Rows followed through every checkpoint, in the last checkpoint's PCA basis."""

    dims: int
    explained_variance_ratio: list[float]
    sample_rows: int
    counted_rows: int
    checkpoints: list[CheckpointSummary]
    points: list[TrajectoryPoint]
    count_column: str | None = None


@dataclass(frozen=True)
class VersionInfo(Checkpoint):
    """One side of a drift: a checkpoint of a table."""

    table: str
    rows: int


@dataclass(frozen=True)
class MovedRow:
    """A token's two rows: their cosine, distance and norms."""

    token: str
    from_id: int
    to_id: int
    cosine: float
    distance: float
    from_norm: float
    to_norm: float
    count: int | float | None = None


@dataclass(frozen=True, kw_only=True)
class TokenDrift(MovedRow):
    """A named token's rows and neighbour lists in both versions."""

    k: int
    before: list[Neighbor]
    after: list[Neighbor]
    overlap: int
    entered: list[str]
    left: list[str]
    unshared: list[str]


@dataclass(frozen=True)
class DriftCounts:
    """How counts relate to how far rows moved."""

    column: str
    rows: int
    spearman_distance: SpearmanFigure | None = None
    spearman_cosine: SpearmanFigure | None = None


@dataclass(frozen=True)
class Drift(Matched):
    """Two versions compared: the rows that moved most and least, and named tokens' lists."""

    source: VersionInfo = field(metadata={"json": "from"})
    target: VersionInfo = field(metadata={"json": "to"})
    shared_tokens: int
    compared_rows: int
    mean_distance: float
    most_moved: list[MovedRow]
    least_moved: list[MovedRow]
    tokens: list[TokenDrift]
    mean_cosine: float | None = None
    counts: DriftCounts | None = None

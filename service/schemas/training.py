"""Request and response models of the routes over a table's versions: trajectory and drift.

Hard ceilings live here; the configured limits (max_trajectory_points, max_trajectory_values,
max_drift_limit, max_drift_tokens, max_k, max_results) are checked by the runners and answered
with 422 LimitExceeded.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from service.config import TABLE_NAME_PATTERN
from service.schemas.common import (
    MAX_ITEMS,
    NUMBER_ONLY,
    CheckpointIndex,
    K,
    Matched,
    Neighbor,
    OneOf,
    Strict,
    Token,
    exactly_one_of,
)
from service.schemas.diagnostics import SpearmanFigure
from service.schemas.projection import MAX_POINTS, Dims, Points, Seed
from service.schemas.tables import CheckpointInfo

TableName = Annotated[
    str, Field(pattern=TABLE_NAME_PATTERN, description="Another served table (its last version).")
]
Version = CheckpointIndex | TableName
DriftLimit = Annotated[
    int,
    Field(ge=1, le=MAX_ITEMS, description="Rows listed as moved most, and as moved least."),
    NUMBER_ONLY,
]


class TrajectoryRequest(OneOf):
    model_config = exactly_one_of("tokens", "points")

    tokens: list[Token] | None = Field(
        None,
        min_length=1,
        max_length=MAX_POINTS,
        fail_fast=True,  # up to a million items: the first bad one ends validation
        description="Follow these rows.",
    )
    points: Points | None = Field(None, description="Follow this many rows (see selection).")
    selection: Literal["first", "random"] = Field(
        "first", description="With points: the first rows with a direction, or seeded random rows."
    )
    seed: Seed = 0
    dims: Dims = 2


class TrajectoryPoint(Strict):
    """One row at every checkpoint (lists indexed by checkpoint); null where it has no
    direction (coordinates, cosine)."""

    token: str
    id: int
    metadata: dict[str, int | float | str | None] = Field(default_factory=dict)
    x: list[float | None]
    y: list[float | None]
    z: list[float | None] | None = None
    norm: list[float]
    cosine_to_initial: list[float | None] = Field(
        description="Cosine of the row with its own row at checkpoint 0."
    )
    distance_to_initial: list[float] = Field(
        description="L2 distance of the row from its own row at checkpoint 0."
    )


class CheckpointSummary(CheckpointInfo):
    """How the whole table stands at one checkpoint against checkpoint 0."""

    mean_norm: float
    mean_distance_to_initial: float
    mean_cosine_to_initial: float | None = Field(
        None, description="Over the rows with a direction at both checkpoints (absent: none has)."
    )
    spearman_distance: SpearmanFigure | None = Field(
        None, description="log count vs distance to the initial row (tables with counts)."
    )
    spearman_norm: SpearmanFigure | None = Field(
        None, description="log count vs norm (tables with counts)."
    )


class TrajectoryResponse(Matched):
    dims: int
    explained_variance_ratio: list[float] = Field(
        description="Of the basis, fitted on the last checkpoint (as /projection's)."
    )
    sample_rows: int
    count_column: str | None = Field(None, description="The column correlated (absent: none).")
    counted_rows: int = Field(description="Rows with a positive count: the rows correlated.")
    checkpoints: list[CheckpointSummary]
    points: list[TrajectoryPoint]


class DriftRequest(Strict):
    source: Version = Field(
        0,
        alias="from",
        description="The earlier version: a checkpoint of this table, or another table's name.",
    )
    target: Version | None = Field(
        None,
        alias="to",
        description="The later version: a checkpoint or a table (default: this table's last).",
    )
    tokens: list[Token] = Field(
        default_factory=list,
        max_length=MAX_ITEMS,
        fail_fast=True,
        description="Tokens whose top-k neighbour lists are compared (at most max_drift_tokens).",
    )
    k: K | None = None
    limit: DriftLimit | None = Field(None, description="Default 100 (at most max_drift_limit).")


class VersionInfo(CheckpointInfo):
    table: str
    rows: int


class MovedRow(Strict):
    token: str
    from_id: int
    to_id: int
    cosine: float = Field(description="Of the token's two rows.")
    distance: float = Field(description="L2 distance between the token's two rows.")
    from_norm: float
    to_norm: float
    count: int | float | None = Field(None, description="The to version's count, if it has one.")


class DriftCounts(Strict):
    column: str
    rows: int = Field(description="Shared rows with a positive count: the rows correlated.")
    spearman_distance: SpearmanFigure | None = None
    spearman_cosine: SpearmanFigure | None = None


class TokenDrift(MovedRow):
    k: int
    before: list[Neighbor] = Field(description="Top-k neighbours in the from version.")
    after: list[Neighbor] = Field(description="Top-k neighbours in the to version.")
    overlap: int = Field(description="Tokens in both lists.")
    entered: list[str] = Field(description="In the after list only.")
    left: list[str] = Field(description="In the before list only.")
    unshared: list[str] = Field(description="Listed, but not in the other version's vocabulary.")


class DriftResponse(Matched):
    model_config = ConfigDict(extra="forbid", serialize_by_alias=True)

    source: VersionInfo = Field(alias="from")
    target: VersionInfo = Field(alias="to")
    shared_tokens: int
    compared_rows: int = Field(description="Shared rows with a direction in both versions.")
    mean_cosine: float | None = Field(None, description="Over the compared rows (if any).")
    mean_distance: float = Field(description="Over the shared rows.")
    most_moved: list[MovedRow] = Field(description="Lowest cosine first.")
    least_moved: list[MovedRow] = Field(description="Highest cosine first.")
    counts: DriftCounts | None = None
    tokens: list[TokenDrift]

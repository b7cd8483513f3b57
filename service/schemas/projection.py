"""Request and response models of the projection routes (the explorer's picture).

Hard ceilings live here; the configured limits (max_projection_points, max_batch) are checked
by the routes and answered with 422 LimitExceeded.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from service.schemas.common import (
    INCOMPLETE,
    MAX_ITEMS,
    NUMBER_ONLY,
    READABLE,
    Base64Vector,
    Matched,
    OneOf,
    Strict,
    Token,
    Vector,
    exactly_one_of,
)

# The schema's ceiling; the configured max_projection_points (default 20,000) is lower.
MAX_POINTS = 1_000_000

Dims = Annotated[Literal[2, 3], NUMBER_ONLY, Field(description="2 or 3 coordinates per point.")]
Points = Annotated[
    int,
    Field(ge=1, le=MAX_POINTS, description="Rows to plot (at most max_projection_points)."),
    NUMBER_ONLY,
]
Seed = Annotated[int, Field(ge=0, le=2**32 - 1), NUMBER_ONLY]


class TokenSelection(Strict):
    """Plot exactly these tokens (at most max_projection_points)."""

    tokens: list[Token] = Field(min_length=1, max_length=MAX_POINTS, fail_fast=True)


class ProjectionRequest(Strict):
    method: Literal["pca"] = Field("pca", description="PCA of the spherized rows.")
    dims: Dims = 2
    points: Points = 1000
    selection: Literal["first", "random", "words"] | TokenSelection = Field(
        "first",
        description="first: the first N rows (frequency order in word2vec, GloVe and projector "
        "files); random: N rows drawn with `seed`; words: the first N rows whose token is a "
        "whole word (two letters or more; a word-initial piece of three or more on "
        "byte-level and SentencePiece tables), skipping the default /diagnostics' reference "
        "rows and the suspects ranked against them, then the first other rows if there are "
        "fewer (the explorer's default); {tokens}: these rows. Zero rows are skipped.",
    )
    seed: Seed = Field(0, description="Seed of the random selection (not of the fit).")
    fit: Literal["table", "selection"] = Field(
        "table",
        description="table: the table's PCA basis (fitted once per load on its seeded sample), "
        "the same for every request, where /project places other rows; selection: a PCA "
        "fitted on exactly the selected rows (at least 2, at most projection_sample_rows), as "
        "the Projector refits isolated points.",
    )


class ProjectRequest(OneOf):
    model_config = exactly_one_of("tokens", "vectors", "vectors_b64")

    tokens: list[Token] | None = Field(None, min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    vectors: list[Vector] | None = Field(None, min_length=1, max_length=MAX_ITEMS, fail_fast=True)
    vectors_b64: list[Base64Vector] | None = Field(
        None, min_length=1, max_length=MAX_ITEMS, fail_fast=True
    )
    dims: Dims = 2


class ProjectedPoint(Strict):
    """A table row on the picture, with what the explorer shows when it is hovered."""

    token: str
    id: int
    norm: float = Field(description="L2 norm of the raw row.")
    text: str | None = Field(None, description=READABLE)
    incomplete: bool | None = Field(None, description=INCOMPLETE)
    x: float
    y: float
    z: float | None = None
    metadata: dict[str, int | float | str | None] = Field(default_factory=dict)


class ProjectedVector(Strict):
    """A raw vector on the picture (normalised first, like every row)."""

    x: float
    y: float
    z: float | None = None


class ProjectionResponse(Matched):
    method: Literal["pca"]
    fit: Literal["table", "selection"] = Field(description="Which rows the basis was fitted on.")
    dims: int
    explained_variance_ratio: list[float] = Field(
        description="Share of the spherized sample's variance along each component."
    )
    sample_rows: int = Field(
        description="Rows the basis was fitted on (the table's seeded sample, or the selection)."
    )
    points: list[ProjectedPoint]
    words: int | None = Field(
        None,
        description="With selection words: how many of the points are whole-word rows (the "
        "rest filled up to `points` in row order).",
    )


class ProjectResponse(Matched):
    dims: int
    points: list[ProjectedPoint | ProjectedVector]

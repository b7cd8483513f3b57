"""Rows and scores: lookups (vectors as numpy arrays), similarities, output scoring."""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field

import numpy as np

Metadata = dict[str, int | float | str | None]


@dataclass(frozen=True)
class Lookup:
    """Rows in the order asked: tokens, ids (None for a mean of pieces), norms and vectors.

    `vectors` is an (n, width) float32 array, or None when the lookup asked for no vectors.
    """

    tokens: list[str]
    ids: list[int | None]
    norms: np.ndarray
    vectors: np.ndarray | None
    metadata: list[Metadata]
    matched: dict[str, str | list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Similarities:
    """The cosine of each pair, in the order asked."""

    pairs: list[tuple[str, str]]
    scores: np.ndarray
    matched: dict[str, str | list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class SimilarityMatrix:
    """The cosines of every pair of the tokens: an (n, n) array."""

    tokens: list[str]
    matrix: np.ndarray
    matched: dict[str, str | list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoredToken:
    """A row's logit against the vector (and its probability under softmax)."""

    token: str
    id: int
    logit: float
    probability: float | None = None
    text: str | None = None


@dataclass(frozen=True)
class TargetScore(ScoredToken):
    """The target token's logit and rank (1 + rows with a strictly higher logit)."""

    _: KW_ONLY
    rank: int


@dataclass(frozen=True)
class Score:
    """Output scoring: the top rows by logit, the target's rank, the softmax normaliser."""

    top: list[ScoredToken]
    target: TargetScore | None = None
    log_partition: float | None = None
    matched: dict[str, str | list[str]] = field(default_factory=dict)

"""Rows and scores: lookups (vectors as numpy arrays), similarities, output scoring."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from embedding_service.models.answers import Matched, Metadata, Readable


@dataclass(frozen=True)
class Lookup(Matched):
    """Rows in the order asked: tokens, ids (None for a mean of pieces), norms and vectors.

    `vectors` is an (n, width) float32 array, or None when the lookup asked for no vectors.
    """

    tokens: list[str]
    ids: list[int | None]
    norms: np.ndarray
    vectors: np.ndarray | None
    metadata: list[Metadata]


@dataclass(frozen=True)
class Similarities(Matched):
    """The cosine of each pair, in the order asked."""

    pairs: list[tuple[str, str]]
    scores: np.ndarray


@dataclass(frozen=True)
class SimilarityMatrix(Matched):
    """The cosines of every pair of the tokens: an (n, n) array."""

    tokens: list[str]
    matrix: np.ndarray


@dataclass(frozen=True)
class ScoredToken(Readable):
    """A row's logit against the vector (and its probability under softmax); `text`, a text
    query's row decoded, or a language model's token as the text it stands for."""

    token: str
    id: int
    logit: float
    probability: float | None = None


@dataclass(frozen=True, kw_only=True)
class TargetScore(ScoredToken):
    """The target token's logit and rank (1 + rows with a strictly higher logit)."""

    rank: int


@dataclass(frozen=True)
class Score(Matched):
    """Output scoring: the rows scored (`head`: "tied", the table's own, or a language model's
    output tensor), the top rows by logit, the target's rank, the softmax normaliser."""

    head: str
    top: list[ScoredToken]
    target: TargetScore | None = None
    log_partition: float | None = None

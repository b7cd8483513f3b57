"""Plain query and result records passed between callers and the index."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

AnalogyMethod = Literal["add", "mul"]
# How 3CosMul scores a raw vector term: at unit length, or as gensim's most_similar_cosmul does.
VectorTerms = Literal["unit", "as_given"]


@dataclass(frozen=True)
class Neighbors:
    """Result rows in descending score order."""

    ids: np.ndarray
    scores: np.ndarray


@dataclass(frozen=True)
class Term:
    """One analogy term: a table row (unit-normalised) or a raw vector, used as given unless
    `unit` (a mean of a text's pieces weighs as one row does); `what` names it in an error."""

    row: int | None = None
    vector: np.ndarray | None = None
    weight: float = 1.0
    unit: bool = False
    what: str = "an analogy vector term"


@dataclass(frozen=True)
class SearchOptions:
    """Per-query search choices on a table with an approximate index: the exhaustive path
    (`exact`), or the index's effort (HNSW's ef_search, IVF's nprobe, and for indexes of codes
    the k_factor times more candidates rescored exactly); None: the table's."""

    exact: bool = False
    ef_search: int | None = None
    nprobe: int | None = None
    k_factor: int | None = None
    probe_margin: float | None = None


DEFAULT_SEARCH = SearchOptions()


@dataclass(frozen=True, eq=False)
class Among:
    """A candidate set: distinct row ids of a table, sorted (among.py searches it). Compared
    by identity: the queries of one request share one set, and one pass over it."""

    rows: np.ndarray


@dataclass(frozen=True)
class NeighborQuery:
    """Top-k cosine neighbours of a direction, minus excluded rows, within the first `restrict`
    or among exactly the rows of `among`.

    Before CosineSearch.plan, `vector` is any vector (a table row's when `row` names it); plan
    makes it the unit direction, once.
    """

    vector: np.ndarray
    k: int
    exclude: frozenset[int] = field(default_factory=frozenset)
    restrict: int | None = None
    mix: TermMix | None = None
    options: SearchOptions = DEFAULT_SEARCH
    row: int | None = None
    among: Among | None = None


@dataclass(frozen=True)
class TermMix:
    """A direction that is a weighted sum of unit table rows: sum(weights[i] * unit(rows[i]))."""

    rows: np.ndarray
    weights: np.ndarray


@dataclass(frozen=True)
class AnalogyQuery:
    """gensim most_similar (`add`) or most_similar_cosmul (`mul`) over weighted terms.

    `vector_terms` is how `mul` scores a raw vector term: "unit" (its direction), or
    "as_given" (gensim's: its cosines times its norm; then no term may be weighted). `add`
    always adds raw vectors as given, as gensim's most_similar does.
    """

    positive: tuple[Term, ...]
    negative: tuple[Term, ...] = ()
    k: int = 10
    method: AnalogyMethod = "add"
    exclude: frozenset[int] = field(default_factory=frozenset)
    restrict: int | None = None
    options: SearchOptions = DEFAULT_SEARCH
    vector_terms: VectorTerms = "unit"

    def input_rows(self) -> frozenset[int]:
        """Rows named as terms, plus the extra exclusions: never part of the answer."""
        rows = frozenset([t.row for t in self.positive + self.negative if t.row is not None])
        return rows.union(self.exclude) if self.exclude else rows


@dataclass(frozen=True)
class CosmulQuery:
    """A 3CosMul analogy with its terms already unit vectors (rows: positive then negative).

    `scales`: each term's cosine multiplier when raw vectors are taken as given (a raw
    vector's norm, 1 for the other terms; cosmul_given.py); None when every term is at unit
    length, and the objective is then positive, at most 1e6, and ranked by its logarithm.
    """

    terms: np.ndarray
    exponents: np.ndarray
    positives: int
    k: int
    exclude: frozenset[int]
    restrict: int | None
    scales: np.ndarray | None = None


@dataclass(frozen=True)
class ScoreQuery:
    """Output-layer scoring of one vector against every raw row."""

    vector: np.ndarray
    k: int
    softmax: bool = False
    temperature: float = 1.0
    target: int | None = None


@dataclass(frozen=True)
class Scores:
    """Top-k rows by raw dot product, optional probabilities and the target's standing."""

    ids: np.ndarray
    logits: np.ndarray
    probabilities: np.ndarray | None
    log_partition: float | None
    target_row: int = -1
    target_rank: int | None = None
    target_logit: float | None = None
    target_probability: float | None = None


# A query planned for the search: a neighbour query (3CosAdd too), or a 3CosMul query.
Plan = NeighborQuery | CosmulQuery
